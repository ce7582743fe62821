"""Policies over the research environments' observations, as SDK bots.

A *policy* takes what :mod:`harness.envs.euchre_v0` shows an agent (a dict with
``action_mask`` and ``observation``, or the named arrays with ``obs_type="dict"``) and
returns an action id. :class:`PolicyBot` turns one into a :class:`~harness.sdk.Bot`: at
each decision it builds that same dict from the seat's observation (the one the SDK
decodes from the referee's request) and plays the action the policy returns. The same
policy therefore plays identically in the environment, in process
(``run --in-process``) and over gRPC (``run``, ``sprt``, ``ladder``)::

    from harness.envs.adapter import PolicyBot
    from harness.sdk import run

    run(PolicyBot(my_policy, name="my-policy"))

:class:`SpielBot` does the same for an OpenSpiel bot (``pyspiel.Bot``, e.g. ISMCTS)
playing the ``python_euchre`` game: each decision, it builds a single-hand state
consistent with what the seat has seen (a world drawn by
:class:`~harness.sdk.search.worlds.WorldSampler`) and asks the OpenSpiel bot for its step.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from harness.envs.euchre_v0 import observation_of
from harness.rules import Action, Observation, RulesConfig
from harness.sdk import Bot
from harness.sdk.search.worlds import WorldSampler

Policy = Callable[[dict[str, Any]], int]

__all__ = ["Policy", "PolicyBot", "SpielBot"]


class PolicyBot(Bot):
    """An SDK bot that plays ``policy`` (see the module docstring)."""

    def __init__(self, policy: Policy, *, obs_type: str = "vector",
                 name: str = "policy") -> None:
        self.policy = policy
        self.obs_type = obs_type
        self.name = name

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        rules = self.rules or RulesConfig()
        return Action.from_id(int(self.policy(observation_of(obs, rules, self.obs_type))))


class SpielBot(Bot):
    """An SDK bot that asks an OpenSpiel bot, made by ``make_bot(game)`` for the
    single-hand ``python_euchre`` game of the current rules, for every decision."""

    def __init__(self, make_bot: Callable[[Any], Any], *, seed: int = 0,
                 name: str = "openspiel") -> None:
        self.make_bot = make_bot
        self.seed = seed
        self.name = name
        self._game: Any = None
        self._bot: Any = None
        self._rules: RulesConfig | None = None

    def _spiel(self, rules: RulesConfig) -> tuple[Any, Any]:
        if rules != self._rules:
            from harness.envs.openspiel import load

            options = {k: v for k, v in rules.to_dict().items()
                       if k not in ("form", "deck", "target")}
            self._game = load(form=rules.form.value, deck=rules.deck.value, target=0,
                              rules=options)
            self._bot = self.make_bot(self._game)
            self._rules = rules
        return self._game, self._bot

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        from harness.envs.openspiel import EuchreState

        rules = self.rules or RulesConfig()
        game, bot = self._spiel(rules)
        rng = random.Random(f"{self.seed}/{obs.hand_number}/{obs.seat}/"
                            f"{len(obs.public_actions)}/{len(obs.discards)}")
        world = WorldSampler(obs, rules).sample(rng)
        state = EuchreState.from_hand(game, world.to_hand())
        return Action.from_id(int(bot.step(state)))
