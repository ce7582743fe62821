"""The lean play-phase rollout: the heuristic bot's choices, the engine's rules and
scores."""

from __future__ import annotations

import random

import pytest

from harness.rules import DeckKind, Form, Game, Hand, Observation, Phase, RulesConfig
from harness.rules.observation import observe
from harness.rules.scoring import team_of
from harness.sdk.search.rollout import PlayRollout
from harness.sdk.search.worlds import sample_world
from sample_bots.heuristic_bot import HeuristicBot

CONFIGS = [RulesConfig(form=f, deck=d) for f in Form for d in DeckKind]


def play_positions(config: RulesConfig, games: int) -> list[Observation]:
    """The observation of the seat to play at every play decision of random games."""
    out = []
    for seed in range(games):
        rng = random.Random(seed)
        game = Game(config, seed)
        while game.outcome is None:
            if game.phase is Phase.PLAY:
                out.append(game.observation(game.current))  # type: ignore[arg-type]
            game.apply(rng.choice(game.legal_actions()))
    return out


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.form.value}-{c.deck.value}")
def test_rollout_policy_picks_the_heuristic_bots_card(config: RulesConfig) -> None:
    bot = HeuristicBot()
    bot.on_game_start(config, 0, [])
    positions = play_positions(config, 2)
    assert len(positions) > 20
    for obs in positions:
        want = bot.decide_action(obs, obs.legal_actions).card
        assert want is not None
        got = PlayRollout(obs, config).policy([c.id for c in obs.hand])
        assert got == want.id, (obs.hand, obs.current_trick, obs.trump)


def engine_playout(hand: Hand, config: RulesConfig, seat: int) -> float:
    """The hand played out by the heuristic bot on the engine; the observer's value."""
    bot = HeuristicBot()
    bot.on_game_start(config, seat, [])
    while hand.result is None:
        obs = observe(hand, hand.current, (0,) * 3, 0)  # type: ignore[arg-type]
        hand.apply(bot.decide_action(obs, obs.legal_actions))
    pts = hand.result.points
    me = team_of(config.form, seat)
    others = [p for t, p in enumerate(pts) if t != me]
    return pts[me] - sum(others) / len(others)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.form.value}-{c.deck.value}")
def test_a_rollout_scores_what_the_engine_scores_for_the_same_play(
        config: RulesConfig) -> None:
    rng = random.Random(3)
    checked = 0
    for obs in play_positions(config, 2)[::3]:
        seat = obs.seat
        world = sample_world(obs, config, rng)
        expected = engine_playout(world.to_hand(), config, seat)
        rollout = PlayRollout(obs, config)
        assert rollout.run([[c.id for c in h] for h in world.hands]) == expected
        checked += 1
    assert checked >= 5


def test_a_forced_first_card_is_played_first() -> None:
    config = RulesConfig()
    obs = next(o for o in play_positions(config, 1) if len(o.legal_actions) > 2)
    seat = obs.seat
    world = sample_world(obs, config, random.Random(1))
    rollout = PlayRollout(obs, config)
    assert len(obs.legal_actions) > 1
    for action in obs.legal_actions:
        assert action.card is not None
        hands = [[c.id for c in h] for h in world.hands]
        value = rollout.run(hands, action.card.id)
        # The hand was played to the end: only a sitting-out player holds cards.
        assert not any(h for s, h in enumerate(hands) if s not in obs.sitting_out)
        engine = world.to_hand()
        engine.apply(action)
        assert engine_playout(engine, config, seat) == value


def test_random_rollouts_end_the_hand_with_one_of_its_possible_scores() -> None:
    config = RulesConfig(form=Form.CUTTHROAT, deck=DeckKind.D32)
    rng = random.Random(4)
    for obs in play_positions(config, 1)[:10]:
        world = sample_world(obs, config, rng)
        rollout = PlayRollout(obs, config)
        hands = [[c.id for c in h] for h in world.hands]
        assert rollout.random_run(hands, rng) in rollout.values
        assert not any(hands[s] for s in range(3) if s not in obs.sitting_out)


def test_a_rollout_needs_a_play_decision() -> None:
    game = Game(RulesConfig(), 0)
    with pytest.raises(ValueError, match="play phase"):
        PlayRollout(game.observation(0), RulesConfig())
