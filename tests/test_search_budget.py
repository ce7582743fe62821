"""The search bot's budget is a count of work, not a clock: every world tried counts
(refused ones too), the wall-clock deadline is only a far safety net that says when it
cut a search, and two runs with the same seed play the same game on a loaded machine."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.rules import Action, Game, Observation, Phase, RulesConfig
from harness.rules import actions as A
from harness.sdk.search.bidding import CHECK_COST, PLAYOUT_COST, search_bid
from harness.sdk.search.pimc import INFER_COST, Budget, search_play
from sample_bots.heuristic_bot import HeuristicBot
from sample_bots.search_bot import SearchBot

ROOT = Path(__file__).resolve().parent.parent


def heuristic_policy(config: RulesConfig) -> Callable[[Observation], Action]:
    bot = HeuristicBot()
    bot.on_game_start(config, 0, [])
    return lambda obs: bot.decide_action(obs, obs.legal_actions)


def after_passes(config: RulesConfig, passes: int) -> Observation:
    game = Game(config, 4)
    for _ in range(passes):
        game.apply(A.PASS)
    return game.observation(game.current)  # type: ignore[arg-type]


def first_card_play(config: RulesConfig, seed: int) -> Observation:
    policy = heuristic_policy(config)
    game = Game(config, seed)
    while game.phase is not Phase.PLAY or len(game.legal_actions()) < 2:
        game.apply(policy(game.observation(game.current)))  # type: ignore[arg-type]
    return game.observation(game.current)  # type: ignore[arg-type]


def test_refused_worlds_are_counted_against_the_bidding_budget() -> None:
    config = RulesConfig()
    obs = after_passes(config, 2)  # two seats passed: a model that orders up refuses all
    legal = obs.legal_actions
    budget = Budget(rollouts=400)
    heuristic = heuristic_policy(config)

    def eager(o: Observation) -> Action:
        return A.ORDER_UP if o.phase is Phase.BID_ROUND_1 else heuristic(o)

    result = search_bid(obs, config, random.Random(0), budget, eager)
    assert result.tried > result.worlds >= 1
    assert result.spent == CHECK_COST * result.tried + PLAYOUT_COST * len(legal) * result.worlds
    # The first searched world may overdraw (one is always searched); nothing after it.
    assert result.spent <= max(budget.rollouts, CHECK_COST * result.tried
                               + PLAYOUT_COST * len(legal))
    again = search_bid(obs, config, random.Random(0), budget, eager)
    assert (again.tried, again.worlds, again.values) == (result.tried, result.worlds,
                                                         result.values)


def test_the_bidding_budget_is_spent_to_the_last_world_that_fits() -> None:
    config = RulesConfig()
    obs = after_passes(config, 1)
    policy = heuristic_policy(config)
    result = search_bid(obs, config, random.Random(3), Budget(rollouts=600), policy)
    per_world = PLAYOUT_COST * len(obs.legal_actions)
    assert result.spent <= 600 < result.spent + CHECK_COST + per_world
    assert not result.cut
    plain = search_bid(obs, config, random.Random(3), Budget(rollouts=600), policy,
                       infer=False)
    assert plain.tried == plain.worlds == 600 // per_world


def test_worlds_checked_against_the_bidding_count_in_card_play() -> None:
    config = RulesConfig()
    obs = first_card_play(config, 11)
    n = len(obs.legal_actions)
    result = search_play(obs, config, random.Random(0), Budget(rollouts=500),
                         heuristic_policy(config))
    assert result.spent == INFER_COST * result.tried + n * result.worlds <= 500
    assert result.spent + INFER_COST + n > 500
    assert not result.cut


def test_a_passed_deadline_cuts_the_search_after_one_world_and_says_so() -> None:
    config = RulesConfig()
    obs = after_passes(config, 3)
    result = search_bid(obs, config, random.Random(0), Budget(10**6, deadline=0.0),
                        heuristic_policy(config))
    assert result.worlds == 1 and result.cut
    play = search_play(first_card_play(config, 2), config, random.Random(0),
                       Budget(10**6, deadline=0.0))
    assert play.worlds == 1 and play.cut


def test_the_bot_writes_one_line_when_the_deadline_cuts_a_search(
        capsys: pytest.CaptureFixture[str]) -> None:
    config = RulesConfig()
    bot = SearchBot(ms=1000, seed=1, deadline_ms=1e-6)
    bot.on_game_start(config, 0, [])
    obs = first_card_play(config, 5)
    assert bot.choose(obs, obs.legal_actions) in obs.legal_actions
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "deadline stopped the search" in err[0], err
    # A deadline far beyond any stall of a busy machine (its default, 500 ms, is not):
    # a search it does not cut writes nothing.
    calm = SearchBot(ms=2, seed=1, deadline_ms=60_000)
    calm.on_game_start(config, 0, [])
    calm.choose(obs, obs.legal_actions)
    assert capsys.readouterr().err == ""
    defaults = (SearchBot(ms=5).deadline_ms, SearchBot(ms=200).deadline_ms,
                SearchBot(ms=5, deadline_ms=0).deadline_ms)
    assert defaults == (500, 2000, 0)


@pytest.fixture
def both_cores_busy() -> Iterator[None]:
    """Two processes spinning, one per core, for the length of the test."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2)]
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def match_records(tmp_path: Path, run: str) -> list[list[list[object]]]:
    """Two games to 3 points of the search bot (two seats) against the heuristic bot, as
    the actions of every hand of each record."""
    # The wall-clock safety net (500 ms by default) is set far off, and the clock is
    # roomy: on a machine this busy a 3 ms search once took 660 ms, and a net that fires
    # makes the decision depend on the machine. The budget alone must decide.
    search = "{python} -m sample_bots.search_bot --ms 5 --seed 7 --deadline-ms 60000"
    out = subprocess.run(
        [sys.executable, "-m", "harness", "match", "--bot", f"search={search}",
         "--bot", "heuristic={python} -m sample_bots.heuristic_bot", "--games", "2",
         "--target", "3", "--seed", "3", "--json", "--log-dir", str(tmp_path / run),
         "--store", str(tmp_path / f"{run}.sqlite"), "--tc", "120+120"],
        cwd=ROOT, text=True, capture_output=True, timeout=180)
    assert out.returncode == 0, out.stderr
    logs = "".join(p.read_text() for p in (tmp_path / run).glob("search-*.log"))
    assert "deadline stopped" not in logs, logs  # the net never fired
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(records) == 2
    return [[h["actions"] for h in r["hands"]] for r in records]


@pytest.mark.long
def test_the_same_seed_plays_the_same_games_while_both_cores_are_busy(
        tmp_path: Path, both_cores_busy: None) -> None:
    # The two runs play at the same time: each loads the cores for the other as well.
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda run: match_records(tmp_path, run),
                                 ("first", "second"))
    assert sum(len(hand) for game in first for hand in game) > 50
    assert first == second
