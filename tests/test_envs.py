"""The PettingZoo environment (``harness.envs.euchre_v0``): PettingZoo's own API and seed
tests in every form, and the information audit on every observation it hands out.

The audit replays each episode's game record and checks every card an agent's
observation names (its hand, the upcard, discards, the dummy, played cards) against
``audit_support.knowledge``: what that seat may know at that moment, computed from the
record alone. A leak injected into the encoding must be reported.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from audit_support import cards_shown, knowledge
from pettingzoo.test import api_test, seed_test

from harness.envs import encoding, euchre_v0
from harness.errors import ConfigError, IllegalActionError
from harness.rules import Action

FORMS: list[dict[str, Any]] = [
    {"form": "four-handed", "deck": 24},
    {"form": "four-handed", "deck": 25, "rules": {"stick_the_dealer": True}},
    {"form": "two-handed", "deck": 32},
    {"form": "cutthroat", "deck": 24},
    {"form": "cutthroat", "deck": 25, "rules": {"joker_upcard": "dealer_names"}},
]


def _id(case: dict[str, Any]) -> str:
    return f"{case['form']}-{case['deck']}" + ("-opts" if "rules" in case else "")


# PettingZoo's api_test warns where this environment differs from its defaults on
# purpose: observations are dicts (with obs_type="dict", of named arrays) rather than a
# Box, and an agent whose game is over is shown an all-zero action mask, since it has no
# legal action left (test_a_finished_agent_has_no_legal_action checks that it happens
# only then).
API_TEST_NOTES = (
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
    "ignore:Action mask numpy array is all zeros:UserWarning",
)


@pytest.mark.parametrize("case", FORMS, ids=_id)
@pytest.mark.parametrize("obs_type", ["vector", "dict"])
@pytest.mark.filterwarnings(*API_TEST_NOTES)
def test_pettingzoo_api_test_passes(case: dict[str, Any], obs_type: str) -> None:
    api_test(euchre_v0.env(**case, target=3, obs_type=obs_type), num_cycles=300)


@pytest.mark.parametrize("case", FORMS, ids=_id)
@pytest.mark.parametrize("obs_type", ["vector", "dict"])
def test_a_finished_agent_has_no_legal_action(case: dict[str, Any], obs_type: str) -> None:
    """An agent's action mask is all zeros exactly when its game is over."""
    env = euchre_v0.env(**case, target=3, obs_type=obs_type)
    env.reset(seed=7)
    finished = 0
    for agent in env.agent_iter(20_000):
        obs, _, terminated, truncated, _ = env.last()
        done = terminated or truncated
        assert obs["action_mask"].any() != done, (agent, done)
        finished += done
        env.step(None if done else env.action_space(agent).sample(obs["action_mask"]))
    assert finished == len(env.possible_agents)


@pytest.mark.parametrize("case", FORMS, ids=_id)
def test_pettingzoo_seed_test_passes(case: dict[str, Any]) -> None:
    seed_test(lambda: euchre_v0.env(**case, target=3), num_cycles=200)


Shown = list[tuple[int, int, int, encoding.Arrays]]  # (seat, hand index, clock, arrays)


def play_episode(env: euchre_v0.EuchreEnv, seed: int) -> Shown:
    """Play random legal actions to the end, observing every agent after every action."""
    rng = random.Random(seed)
    env.reset(seed=seed)
    shown: Shown = []
    clock = 0
    assert env.game is not None
    while True:
        for seat, agent in enumerate(env.possible_agents):
            if agent in env.agents:
                shown.append((seat, len(env.game.hands) - 1, clock, env.observe(agent)))
        if not env.agents:
            return shown
        agent = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(list(np.flatnonzero(obs["action_mask"])))))
        clock += 1


def audit_env(env: euchre_v0.EuchreEnv, seed: int) -> tuple[list[str], int]:
    shown = play_episode(env, seed)
    assert env.game is not None and env.game.outcome is not None
    hands = knowledge(env.game.to_record())
    leaks: list[str] = []
    checked = 0
    for seat, h, clock, arrays in shown:
        for field, cards in cards_shown(arrays).items():
            for card in cards:
                checked += 1
                if not hands[h].known(seat, card, clock):
                    leaks.append(f"seat {seat}, hand {h}, clock {clock}: {field} shows "
                                 f"{card} from {hands[h].where.get(card, '?')}")
    return leaks, checked


@pytest.mark.parametrize("case", FORMS, ids=_id)
def test_no_agent_observes_more_than_a_player_at_the_table(case: dict[str, Any]) -> None:
    env = euchre_v0.env(**case, target=5, obs_type="dict")
    total = 0
    for seed in range(3):
        leaks, checked = audit_env(env, seed)
        assert leaks == []
        total += checked
    assert total > 500  # the audit saw the cards


def test_no_agents_info_holds_the_deal_seed() -> None:
    # The game's seed deals every seat's cards: given in an agent's info (which last()
    # returns with the observation), it would tell the agent every hand. It is the
    # experimenter's, on the environment.
    env = euchre_v0.env()
    env.reset(seed=11)
    seen = []
    for agent in env.agent_iter(max_iter=60):
        _, _, terminated, truncated, info = env.last()
        seen.append(dict(info))
        env.step(None if terminated or truncated
                 else int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert env.game_seed and all(info == {} for info in seen), seen[:3]


def test_the_audit_reports_a_leaked_card(monkeypatch: pytest.MonkeyPatch) -> None:
    real = encoding.encode

    def leaky(obs: Any, config: Any) -> encoding.Arrays:
        arrays = real(obs, config)
        env_game = leaky_env.game
        assert env_game is not None
        other = env_game.hand.hands[(obs.seat + 1) % config.players]
        if other:
            arrays["hand"][other[0].id] = 1.0  # the next seat's first card
        return arrays

    monkeypatch.setattr(euchre_v0, "encode", leaky)
    leaky_env = euchre_v0.env(form="four-handed", target=2, obs_type="dict")
    leaks, _ = audit_env(leaky_env, 1)
    assert leaks and "hand shows" in leaks[0] and "seat" in leaks[0]


def test_vector_is_the_dict_flattened_and_the_mask_matches_the_engine() -> None:
    vec = euchre_v0.env(form="cutthroat", deck=25)
    dic = euchre_v0.env(form="cutthroat", deck=25, obs_type="dict")
    vec.reset(seed=7)
    dic.reset(seed=7)
    for _ in range(30):
        agent = vec.agent_selection
        v, d = vec.observe(agent), dic.observe(agent)
        assert np.array_equal(v["observation"], encoding.flatten(d))
        legal = vec.seat_observation(agent).legal_actions
        assert {Action.from_id(int(i)) for i in np.flatnonzero(v["action_mask"])} == set(legal)
        action = legal[len(legal) // 2].id
        vec.step(action)
        dic.step(action)


def test_hand_rewards_are_the_hands_points_and_sum_to_zero() -> None:
    env = euchre_v0.env(form="four-handed", target=10)
    env.reset(seed=3)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    rng = random.Random(3)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.game is not None and env.game.outcome is not None
    s = env.game.scores
    assert totals["player_0"] == pytest.approx(s[0] - s[1])
    assert totals["player_1"] == pytest.approx(s[1] - s[0])
    assert sum(totals.values()) == pytest.approx(0.0)


def test_an_illegal_action_is_refused() -> None:
    env = euchre_v0.env(form="two-handed")
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(illegal)




@pytest.mark.parametrize(("kwargs", "option"), [
    ({"reward": "trick"}, "reward"),
    ({"obs_type": "image"}, "obs_type"),
    ({"form": "two-handed", "rules": {"lone_defender": True}}, "lone_defender"),
    ({"deck": 52}, "deck"),
])
def test_bad_arguments_are_refused_naming_them(kwargs: dict[str, Any], option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        euchre_v0.env(**kwargs)
    assert caught.value.option == option
