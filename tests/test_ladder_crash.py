"""Crash safety: kill -9 a running ladder and start it again on the same store.
Registrations, tokens, finished games and ratings come back; sets in flight are cut
short and their unfinished games are not rated; a remote bot reconnects by itself and
plays on."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from configs import HOUSE_PACE_MS
from ports import unused_port
from serve_support import REPO, Ladder, end, random_bots
from waiting import WAIT_S

from harness.ladder.matchmaking import SetStatus
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.ladder.sets import SetLog
from harness.storage.ladder import LadderStore
from harness.storage.results import ResultsStore

CRASH_LADDER = "crash-ladder"


def _sets(store_path: Path) -> list[SetStatus]:
    if not store_path.exists():
        return []
    with LadderStore(store_path) as store:
        return [s.status for s in SetLog(store).sets()]


def _ready_to_kill(store_path: Path) -> bool:
    """Three sets complete, one of them the visitor's, and a set in flight none of whose
    games is stored yet: it has both its games to go, so a kill now catches it in flight
    (a set seen in flight with one game to go could end before the kill lands)."""
    if not store_path.exists():
        return False
    with LadderStore(store_path) as store:
        sets = SetLog(store).sets()
    complete = [s for s in sets if s.status is SetStatus.COMPLETE]
    begun = [f"{s.key}/" for s in sets if s.status is SetStatus.IN_PROGRESS]
    if len(complete) < 3 or not any("visitor" in s.base for s in complete) or not begun:
        return False
    with ResultsStore(store_path) as results:
        stored = results.count_keys(CRASH_LADDER, begun)  # games stored of each set
    return 0 in stored.values()


@pytest.mark.long
def test_kill_9_and_restart_keeps_everything_finished(tmp_path: Path) -> None:
    store_path = tmp_path / "out" / "ladder.sqlite"
    # Two sets at once, so that the kill catches a set in flight; the house bots think
    # 10 ms a decision, so that a set seen in flight with both games to go lasts far
    # longer than the moment from that poll to the kill.
    first = Ladder(tmp_path, name=CRASH_LADDER, port=unused_port(),  # tests/ports.py
                   concurrency=2, pace_ms=HOUSE_PACE_MS)
    second = None
    visitors = []
    try:
        token = first.register("visitor")
        visitors = random_bots(first.address, token)
        first.wait_for(lambda: _ready_to_kill(store_path),
                       "the visitor's first set, and a set just begun", interval=0.02)
        first.stop(signal.SIGKILL)
        with ResultsStore(store_path) as results:
            games_before = {g.game_key for g in results.games()}
        statuses_before = _sets(store_path)

        second = Ladder(tmp_path, name=CRASH_LADDER, port=first.port, concurrency=2)
        played = second.sets_played("visitor")
        second.wait_for(lambda: second.sets_played("visitor") > played,
                        "the visitor to come back")
        assert second.stop(signal.SIGINT) == 0, second.stderr
    finally:
        end([first, second, *visitors])

    with LadderStore(store_path) as store, ResultsStore(store_path) as results:
        assert Registry(store).authenticate(token) is not None
        sets = SetLog(store).sets()
        rows = list(results.games())
        ratings = LadderRatings()
        ratings.add_games(rows)
        fitted = ratings.refresh(force=True)
    assert games_before <= {r.game_key for r in rows}
    # Every set the crash left in flight was cut short; none is still in progress.
    in_flight = statuses_before.count(SetStatus.IN_PROGRESS)
    assert in_flight >= 1  # two sets run at once, so the kill caught one in flight
    assert [s.status for s in sets[:len(statuses_before)]].count(SetStatus.CUT_SHORT) \
        >= in_flight
    assert all(s.status is not SetStatus.IN_PROGRESS for s in sets)
    assert fitted is not None and "visitor" in fitted.elo


def test_a_second_ladder_on_the_same_store_is_refused_and_the_first_plays_on(
        tmp_path: Path) -> None:
    first = Ladder(tmp_path)
    try:
        second = subprocess.run(
            [sys.executable, "-m", "harness", "ladder", str(first.config), "--port", "0"],
            cwd=REPO, env=first.env, capture_output=True, text=True, timeout=WAIT_S)
        assert second.returncode == 2
        assert "another ladder is using the results store" in second.stderr
        assert "Traceback" not in second.stderr
        # registering while it runs is still fine: only running a ladder is exclusive
        assert first.register("late").startswith("eh_")
        first.wait_for(lambda: first.sets_played("random") >= 1, "a set played")
        assert first.stop() == 0
    finally:
        first.kill()
    assert "UNIQUE constraint" not in first.stderr
