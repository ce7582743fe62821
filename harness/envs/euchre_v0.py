"""``euchre_v0``: a PettingZoo AEC environment for every form, deck and rule option.

::

    from harness.envs import euchre_v0

    env = euchre_v0.env(form="cutthroat", deck=25, target=5, rules={"stick_the_dealer": True})
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(obs)
        env.step(action)

Agents are ``player_0`` ... (seat numbers). An observation is a dict: ``action_mask``
(int8, one slot per :attr:`Action.id`, 1 where legal) and either ``observation`` (a
float32 vector, ``obs_type="vector"``, the default) or the named arrays of
:mod:`harness.envs.encoding` (``obs_type="dict"``). Both hold exactly what the seat may
see: they are built from the engine's observation of that seat, the object the referee
turns into the messages bots receive. Actions are :attr:`Action.id` integers
(:meth:`Action.from_id` turns one back).

Rewards (``reward=``): ``"hand"`` (default) gives, at the end of each hand, the points the
agent's side scored minus the mean of the other sides' points; ``"game"`` gives, at the
end of the game, 1 to the winning side and ``-1 / (sides - 1)`` to the others. Both are
zero-sum. ``reset(seed=S)`` makes the deals (and so the whole episode, for the same
actions) reproducible; the game's own seed is ``env.game_seed`` (for the experimenter:
it deals every seat's cards, so it is never in an agent's ``info``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from harness.envs.encoding import (
    FIELDS,
    NUM_ACTIONS,
    VECTOR_SIZE,
    action_mask,
    describe,
    encode,
    flatten,
)
from harness.errors import ConfigError, IllegalActionError
from harness.rules import Action, Game, Observation, RulesConfig
from harness.rules.scoring import team_count, team_of

__all__ = ["EuchreEnv", "env", "observation_of", "raw_env", "rules_config"]


def rules_config(form: str = "four-handed", deck: int | str = 24, target: int = 10,
                 rules: Mapping[str, Any] | None = None) -> RulesConfig:
    """The engine's rules for the environment's arguments (``rules``: any option of
    docs/rules.md, as in a tournament's ``[rules]`` table)."""
    options = dict(rules or {})
    options.update(form=form, deck=str(deck), target=target)
    return RulesConfig.from_dict(options)


def side_rewards(config: RulesConfig, points: tuple[int, ...] | list[int],
                 seat: int) -> float:
    """``points`` (one per side) seen from ``seat``: its side's minus the others' mean."""
    teams = team_count(config.form)
    own = team_of(config.form, seat)
    others = [p for t, p in enumerate(points[:teams]) if t != own]
    return float(points[own] - sum(others) / len(others))


def observation_of(obs: Observation, config: RulesConfig, obs_type: str = "vector"
                   ) -> dict[str, Any]:
    """What the environment shows for a seat's observation: ``action_mask`` and the
    ``observation`` vector (``obs_type="vector"``) or the named arrays (``"dict"``). A
    bot made from a policy (:mod:`harness.envs.adapter`) is shown the same."""
    arrays = encode(obs, config)
    mask = action_mask(obs.legal_actions)
    if obs_type == "vector":
        return {"observation": flatten(arrays), "action_mask": mask}
    return {**arrays, "action_mask": mask}


class EuchreEnv(AECEnv):  # type: ignore[misc]
    metadata = {"name": "euchre_v0", "render_modes": ["ansi", "human"],
                "is_parallelizable": False}

    def __init__(self, form: str = "four-handed", deck: int | str = 24, target: int = 10,
                 rules: Mapping[str, Any] | None = None, *, reward: str = "hand",
                 obs_type: str = "vector", render_mode: str | None = None) -> None:
        super().__init__()
        if reward not in ("hand", "game"):
            raise ConfigError("reward", f"must be 'hand' or 'game'; got {reward!r}")
        if obs_type not in ("vector", "dict"):
            raise ConfigError("obs_type", f"must be 'vector' or 'dict'; got {obs_type!r}")
        self.config = rules_config(form, deck, target, rules)
        self.reward_mode = reward
        self.obs_type = obs_type
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(self.config.players)]
        mask = spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)
        if obs_type == "vector":
            obs_space = spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (VECTOR_SIZE,), dtype=np.float32),
                "action_mask": mask})
        else:
            obs_space = spaces.Dict({
                **{name: spaces.Box(0.0, 1.0, shape, dtype=np.float32)
                   for name, shape in FIELDS.items()},
                "action_mask": mask})
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._rng = random.Random()
        self.game: Game | None = None
        self.game_seed = 0  # the seed of the game in play (the experimenter's, not an agent's)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
        game_seed = self._rng.getrandbits(63)
        self.game = Game(self.config, game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        # The seed deals every hand of the game: the experimenter's (``env.game_seed``),
        # never in an agent's ``info``, which ``last()`` hands to the agent.
        self.game_seed = game_seed
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _select(self) -> None:
        assert self.game is not None
        seat = self.game.current
        self.agent_selection = self.possible_agents[seat if seat is not None else 0]

    def seat_observation(self, agent: str) -> Observation:
        """The engine's observation of ``agent``'s seat (what the referee would send)."""
        assert self.game is not None
        return self.game.observation(self.possible_agents.index(agent))

    def observe(self, agent: str) -> dict[str, Any]:
        return observation_of(self.seat_observation(agent), self.config, self.obs_type)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        assert game is not None and action is not None
        chosen = Action.from_id(int(action))
        hand = game.hand
        if chosen not in game.legal_actions():
            raise IllegalActionError(chosen, game.current, hand.state_name(),
                                     list(game.legal_actions()))
        self._cumulative_rewards[agent] = 0.0
        game.apply(chosen)
        self.rewards = {a: 0.0 for a in self.agents}
        if hand.result is not None and self.reward_mode == "hand":
            for seat, a in enumerate(self.possible_agents):
                self.rewards[a] = side_rewards(self.config, hand.result.points, seat)
        if game.outcome is not None:
            if self.reward_mode == "game":
                teams = team_count(self.config.form)
                for seat, a in enumerate(self.possible_agents):
                    won = team_of(self.config.form, seat) == game.outcome.winner
                    self.rewards[a] = 1.0 if won else -1.0 / (teams - 1)
            self.terminations = {a: True for a in self.agents}
        self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.game is None:
            return None
        text = describe(self.seat_observation(self.agent_selection), self.config)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def raw_env(**kwargs: Any) -> EuchreEnv:
    return EuchreEnv(**kwargs)


def env(**kwargs: Any) -> EuchreEnv:
    """The environment (see the module docstring for the arguments)."""
    return EuchreEnv(**kwargs)
