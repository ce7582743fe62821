"""The search bot: PIMC card play within its budget, reproducible from its seed, and a
working bot process over gRPC."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from harness.referee.arena import Arena
from harness.referee.outcome import Termination
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules import Action, Form, Game, Hand, Observation, Phase, RulesConfig
from harness.rules import actions as A
from harness.sdk.search.bidding import PLAYOUT_COST, playout, search_bid
from harness.sdk.search.inference import BidFilter, observe_any
from harness.sdk.search.pimc import Budget, search_play
from harness.sdk.search.worlds import WorldRejected, WorldSampler, sample_world
from sample_bots import search_bot
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.search_bot import SearchBot

ROOT = Path(__file__).resolve().parent.parent


def bot_for(config: RulesConfig, seed: int) -> SearchBot:
    # A long wall-clock budget and a fixed number of rollouts: decisions depend only on
    # the seed, however busy the machine.
    bot = SearchBot(ms=10_000, seed=seed, rollouts_per_ms=0.02)
    bot.on_game_start(config, 0, [])
    return bot


def play_game(config: RulesConfig, bots: Sequence[SearchBot], seed: int) -> list[Action]:
    game = Game(config, seed)
    actions = []
    while game.outcome is None and len(game.hands) < 4:
        seat = game.current
        assert seat is not None
        obs = game.observation(seat)
        action = bots[seat].choose(obs, obs.legal_actions)
        assert action in obs.legal_actions
        game.apply(action)
        actions.append(action)
    return actions


@pytest.mark.parametrize("form", list(Form))
def test_the_same_seed_makes_the_same_decisions(form: Form) -> None:
    config = RulesConfig(form=form)
    first = play_game(config, [bot_for(config, 3)] * config.players, 8)
    again = play_game(config, [bot_for(config, 3)] * config.players, 8)
    assert len(first) > 20
    assert first == again


def test_search_values_every_legal_card_within_the_rollout_budget() -> None:
    config = RulesConfig()
    rng = random.Random(2)
    game = Game(config, 5)
    while not (game.phase is Phase.PLAY and len(game.legal_actions()) > 2):
        game.apply(rng.choice(game.legal_actions()))
    obs = game.observation(game.current)  # type: ignore[arg-type]
    result = search_play(obs, config, random.Random(0), Budget(rollouts=60))
    legal = obs.legal_actions
    assert set(result.values) == set(legal)
    assert result.worlds == 60 // len(legal)
    assert result.action in legal
    assert result.values[result.action] == max(result.values.values())


def test_a_passed_deadline_still_searches_one_world() -> None:
    config = RulesConfig(form=Form.TWO_HANDED)
    rng = random.Random(1)
    game = Game(config, 2)
    while not (game.phase is Phase.PLAY and len(game.legal_actions()) > 1):
        game.apply(rng.choice(game.legal_actions()))
    obs = game.observation(game.current)  # type: ignore[arg-type]
    result = search_play(obs, config, random.Random(0), Budget(rollouts=10**6, deadline=0.0))
    assert result.worlds == 1 and result.cut


def test_search_refuses_a_decision_that_is_not_a_card_play() -> None:
    game = Game(RulesConfig(), 1)
    obs = game.observation(game.current)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="play decision"):
        search_play(obs, RulesConfig(), random.Random(0), Budget(rollouts=10))


def test_the_command_line_sets_the_budget_and_seed_and_passes_the_rest_to_the_sdk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[SearchBot, Sequence[str] | None]] = []
    monkeypatch.setattr(search_bot, "run", lambda bot, argv=None: seen.append((bot, argv)))
    search_bot.main(["--ms", "20", "--address", "localhost:1", "--seed", "9"])
    search_bot.main(["--bids", "heuristic", "--play-worlds", "bids"])
    (bot, rest), (other, _) = seen
    assert (bot.ms, bot.seed, bot.search_bids, bot.infer_play) == (20.0, 9, True, False)
    assert rest == ["--address", "localhost:1"]
    assert (other.ms, other.search_bids, other.infer_play) == (50.0, False, True)


def test_the_search_bot_plays_whole_games_over_grpc(tmp_path: Path) -> None:
    search = (sys.executable, "-m", "sample_bots.search_bot", "--ms", "5", "--seed", "1")
    heuristic = (sys.executable, "-m", "sample_bots.heuristic_bot")

    async def go() -> None:
        async with Arena(log_dir=tmp_path, startup_timeout=30) as arena:
            arena.add(Entrant("search", BotCommand(search, cwd=str(ROOT))), 2)
            arena.add(Entrant("heuristic", BotCommand(heuristic, cwd=str(ROOT))), 1)
            config = RulesConfig(form=Form.CUTTHROAT, target=4)
            result = await arena.play("g1", config, 3, ["search", "heuristic", "search"])
            assert result.termination is Termination.NORMAL
            assert not result.faults
    asyncio.run(go())


def heuristic_policy(config: RulesConfig) -> Callable[[Observation], Action]:
    bot = HeuristicBot()
    bot.on_game_start(config, 0, [])
    return lambda obs: bot.decide_action(obs, obs.legal_actions)


def test_bid_search_values_every_legal_bid_within_the_budget() -> None:
    config = RulesConfig()
    game = Game(config, 4)
    obs = game.observation(game.current)  # type: ignore[arg-type]
    result = search_bid(obs, config, random.Random(0), Budget(rollouts=40 * PLAYOUT_COST),
                        heuristic_policy(config), infer=False)
    assert set(result.values) == set(obs.legal_actions) == {A.PASS, A.ORDER_UP}
    assert result.worlds == 20
    assert result.values[result.action] == max(result.values.values())


def test_passing_out_the_last_bid_scores_nothing() -> None:
    config = RulesConfig(form=Form.TWO_HANDED)
    game = Game(config, 6)
    while not (game.phase is Phase.BID_ROUND_2 and game.current == game.hand.dealer):
        game.apply(A.PASS)
    obs = game.observation(game.current)
    world = sample_world(obs, config, random.Random(0))
    assert playout(world, A.PASS, heuristic_policy(config)) == 0.0
    call = next(a for a in obs.legal_actions if a is not A.PASS)
    assert playout(world, call, heuristic_policy(config)) != 0.0  # someone scores


def test_a_world_the_check_refuses_is_rejected() -> None:
    config = RulesConfig()
    game = Game(config, 2)
    first = game.current
    game.apply(A.PASS)
    obs = game.observation((first + 1) % 4)  # type: ignore[operator]
    world = sample_world(obs, config, random.Random(0))
    assert world.to_hand(lambda hand, seat, action: True).current == obs.seat
    with pytest.raises(WorldRejected, match=f"seat {first} would not"):
        world.to_hand(lambda hand, seat, action: seat != first)


def test_bid_search_refuses_a_card_play() -> None:
    config = RulesConfig()
    rng = random.Random(1)
    game = Game(config, 2)
    while game.phase is not Phase.PLAY:
        game.apply(rng.choice(game.legal_actions()))
    obs = game.observation(game.current)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="before play"):
        search_bid(obs, config, rng, Budget(rollouts=10), heuristic_policy(config))


def test_play_search_with_bid_inference_keeps_worlds_the_bidding_explains() -> None:
    config = RulesConfig()
    policy = heuristic_policy(config)
    for seed in range(40):  # a hand in which the heuristic bidding made trump
        game = Game(config, seed)
        while game.phase is not Phase.PLAY and game.outcome is None:
            game.apply(policy(game.observation(game.current)))  # type: ignore[arg-type]
        if game.phase is Phase.PLAY and len(game.legal_actions()) > 1:
            break
    obs = game.observation(game.current)  # type: ignore[arg-type]
    keep = BidFilter(obs.seat, policy)
    sampler = WorldSampler(obs, config)
    rng = random.Random(3)
    kept = [w for w in (sampler.sample(rng) for _ in range(60)) if keep.accept(w)]
    assert keep.accepted == len(kept) > 0
    assert keep.rejected > 0  # uniform worlds the heuristic's bids rule out
    checked: list[Action] = []

    def model_made_it(hand: Hand, seat: int, action: Action) -> bool:
        if hand.phase is not Phase.PLAY and seat != obs.seat:
            assert policy(observe_any(hand, seat)) is action
            checked.append(action)
        return True

    for world in kept:  # the model makes every other seat's bid in each kept world
        world.to_hand(model_made_it)
    assert checked
    result = search_play(obs, config, random.Random(0), Budget(rollouts=300), policy)
    assert result.action in obs.legal_actions
    assert 0 < result.worlds * len(obs.legal_actions) <= 300
