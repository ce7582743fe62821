"""Ladder ratings: incremental refresh equals a full refit; throttling; history; standings
with versions."""

from __future__ import annotations

import math
import os
import random
import signal
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.ladder import fit_process
from harness.ladder.fit_process import _Channel
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry
from harness.referee.outcome import Termination
from harness.results.elo import Ratings
from harness.results.rating import fit_ratings
from harness.storage.ladder import LadderStore
from harness.storage.results import GameRow


def _row(i: int, a: str, b: str, a_won: bool,
         termination: Termination = Termination.NORMAL) -> GameRow:
    seats = (a, b, a, b)
    ranking = (1, 2, 1, 2) if a_won else (2, 1, 2, 1)
    record = {"tournament": {"id": "ladder", "key": f"g{i}", "group": f"g{i}", "table": 0,
                             "sides": [[a], [b]]}}
    return GameRow("ladder", f"g{i}", "four-handed", i, seats, termination, (10, 4), ranking,
                   5, "", "", 1.0, record)


def _rows(n: int, seed: int = 3) -> list[GameRow]:
    rng = random.Random(seed)
    strength = {"a": 0.8, "b": 0.6, "c": 0.45, "d": 0.3, "e": 0.5}
    rows = []
    for i in range(n):
        a, b = rng.sample(sorted(strength), 2)
        rows.append(_row(i, a, b, rng.random() < strength[a] / (strength[a] + strength[b])))
    return rows


def test_incremental_refresh_equals_a_full_refit() -> None:
    rows = _rows(300)
    ratings = LadderRatings()
    for start in range(0, len(rows), 7):
        ratings.add_games(rows[start:start + 7])
        ratings.refresh()
    full = fit_ratings(rows)
    assert full is not None and ratings.current is not None
    assert ratings.current.players == full.players
    for name in full.players:
        assert ratings.current.elo[name] == pytest.approx(full.elo[name], abs=1e-6)
        assert ratings.current.ci95[name] == pytest.approx(full.ci95[name], abs=1e-6)
        assert ratings.current.games[name] == pytest.approx(full.games[name])
        assert ratings.current.score[name] == pytest.approx(full.score[name])


def test_unrated_games_are_not_counted() -> None:
    ratings = LadderRatings()
    added = ratings.add_games([_row(0, "a", "b", True),
                               _row(1, "a", "b", True, Termination.INTERRUPTED)])
    assert added == 1 and ratings.games == 1


def test_refresh_waits_for_enough_games_or_time() -> None:
    now = [0.0]
    ratings = LadderRatings(every_games=5, every_seconds=10.0, clock=lambda: now[0])
    rows = _rows(20)
    ratings.add_games(rows[:1])
    first = ratings.refresh()  # first refresh: the clock has never refreshed
    assert first is not None
    ratings.add_games(rows[1:3])
    assert not ratings.due() and ratings.refresh() is first
    now[0] = 11.0
    assert ratings.due() and ratings.refresh() is not first
    ratings.add_games(rows[3:8])
    assert ratings.due()  # five new games, however little time passed
    stale = ratings.current
    assert ratings.refresh(force=True) is not stale


def test_a_large_ladder_refreshes_by_time_only_within_its_cpu_share() -> None:
    now, cpu = [0.0], [0.0]

    def slow_cpu() -> float:  # every read inside a refresh moves the CPU clock on
        cpu[0] += 0.005
        return cpu[0]

    ratings = LadderRatings(every_games=50, every_seconds=1.0, clock=lambda: now[0],
                            sparse_above=2, cpu_share=0.02, cpu_clock=slow_cpu)
    rows = _rows(100)
    ratings.add_games(rows[:10])
    first = ratings.refresh()  # 5 bots: above sparse_above, so the refresh is measured
    assert first is not None and ratings.last_fit_cpu == pytest.approx(0.005)
    ratings.add_games(rows[10:12])
    now[0] = 5.0  # due by time, but the process has done no other work since
    assert not ratings.due() and ratings.refresh() is first
    cpu[0] += 0.25  # 50 times the refresh's CPU spent elsewhere: 2% of it
    assert ratings.due() and ratings.refresh() is not first
    ratings.add_games(rows[12:62])  # due by games: never held back
    assert ratings.due()
    small = LadderRatings(every_games=50, every_seconds=1.0, clock=lambda: now[0],
                          cpu_clock=slow_cpu)  # 5 bots, under sparse_above: time alone
    small.add_games(rows[:10])
    small.refresh()
    small.add_games(rows[10:12])
    now[0] += 1.0
    assert small.due()


def test_history_is_stored_every_n_games_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ladder.db"
    with LadderStore(path) as store:
        ratings = LadderRatings(store, history_every=10)
        rows = _rows(35)
        for row in rows:
            ratings.add_games([row])
            ratings.refresh()
    with LadderStore(path) as store:
        history = LadderRatings(store).history()
    assert [h["games"] for h in history] == [10, 20, 30]
    assert {p["name"] for p in history[-1]["players"]} == {"a", "b", "c", "d", "e"}


def test_standings_show_latest_versions_with_inherited_ratings(tmp_path: Path) -> None:
    with LadderStore(tmp_path / "ladder.db") as store:
        registry = Registry(store)
        for name in "abcde":
            registry.register(name, "owner")
        registry.new_version("a")
        ratings = LadderRatings()
        ratings.add_games(_rows(200))
        ratings.refresh()
        entrants = registry.entrants(include_retired=True)
        every = ratings.standings(entrants)
        latest = ratings.standings(entrants, latest_only=True)
    assert {r["name"] for r in every} == {"a", "a@2", "b", "c", "d", "e"}
    assert "a" not in {r["name"] for r in latest}
    a2 = next(r for r in latest if r["name"] == "a@2")
    a1 = next(r for r in every if r["name"] == "a")
    assert a2["inherited_from"] == "a" and a2["elo"] == a1["elo"] and a2["games"] == 0
    assert a1["retired"] and not a2["retired"]
    elos = [r["elo"] for r in latest]
    assert elos == sorted(elos, reverse=True)


def test_standings_before_any_game_list_everyone_unrated(tmp_path: Path) -> None:
    with LadderStore(tmp_path / "ladder.db") as store:
        registry = Registry(store)
        registry.register("solo", "owner")
        rows = LadderRatings().standings(registry.entrants())
    assert rows == [{"name": "solo", "games": 0, "elo": None, "owner": "owner",
                     "retired": False, "inherited_from": None}]


def _mixed_row(i: int, a: str, b: str, c: str, d: str, ac_won: bool) -> GameRow:
    record = {"tournament": {"id": "ladder", "key": f"g{i}", "group": f"g{i}", "table": 0,
                             "sides": [[a, c], [b, d]]}}
    return GameRow("ladder", f"g{i}", "four-handed", i, (a, b, c, d), Termination.NORMAL,
                   (10, 4), (1, 2, 1, 2) if ac_won else (2, 1, 2, 1), 5, "", "", 1.0, record)


@settings(max_examples=25, deadline=None, derandomize=True)
@example(seed=0, bots=5, mixed=False, batches=[1, 1], exact_every=30)  # 2 games in all
@given(seed=st.integers(0, 10**6), bots=st.integers(3, 12), mixed=st.booleans(),
       batches=st.lists(st.integers(1, 40), min_size=2, max_size=8),
       exact_every=st.sampled_from([1, 30, 10**6]))
def test_the_sparse_incremental_fit_equals_a_full_refit(
        seed: int, bots: int, mixed: bool, batches: list[int], exact_every: int) -> None:
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(bots if not mixed else max(bots, 4))]
    strength = {n: rng.gauss(0.0, 1.0) for n in names}
    rows: list[GameRow] = []
    ratings = LadderRatings(sparse_above=0, exact_every=exact_every)
    calibrated: set[str] = set()  # the bots of the last exact refit
    for batch in batches:
        new: list[GameRow] = []
        for _ in range(batch):
            i = len(rows) + len(new)
            if mixed:
                a, b, c, d = rng.sample(names, 4)
                edge = strength[a] + strength[c] - strength[b] - strength[d]
                new.append(_mixed_row(i, a, b, c, d, rng.random() < 1 / (1 + math.exp(-edge))))
            else:
                a, b = rng.sample(names, 2)
                edge = strength[a] - strength[b]
                new.append(_row(i, a, b, rng.random() < 1 / (1 + math.exp(-edge))))
        rows += new
        ratings.add_games(new)
        ratings.refresh(force=True)
        full = fit_ratings(rows)
        got = ratings.current
        assert full is not None and got is not None
        assert set(got.players) == set(full.players)
        for name in full.players:
            assert got.elo[name] == pytest.approx(full.elo[name], abs=1e-6)
            assert got.games[name] == pytest.approx(full.games[name])
            assert got.score[name] == pytest.approx(full.score[name])
            assert got.opponents[name] == full.opponents[name]
            # Exact at an exact refit; in between, scaled by each bot's information.
            # A bot new since the refit borrows the median bot's scale, and one of a few
            # games (an interval of hundreds of Elo) moves a lot with each: within 2x.
            exact_now = ratings.exact_games == ratings.games  # this refresh was exact
            if exact_now or (name in calibrated and full.games[name] >= 5):
                assert got.ci95[name] == pytest.approx(full.ci95[name],
                                                       rel=1e-6 if exact_now else 0.35)
            else:
                assert full.ci95[name] / 2 <= got.ci95[name] <= full.ci95[name] * 2
        if ratings.exact_games == ratings.games:
            calibrated = set(full.players)
    assert ratings.drift < 1e-6


def _same_ratings(got: Ratings | None, want: Ratings | None, *, exact: bool = True) -> None:
    assert got is not None and want is not None
    assert set(got.players) == set(want.players)
    for name in want.players:
        assert got.elo[name] == pytest.approx(want.elo[name], abs=1e-9 if exact else 1e-6)
        assert got.games[name] == pytest.approx(want.games[name])
        assert got.opponents[name] == want.opponents[name]
        if exact:
            assert got.ci95[name] == pytest.approx(want.ci95[name], abs=1e-9)
    if exact:
        assert got.players == want.players
        assert np.array_equal(got.covariance, want.covariance)


def test_a_large_ladder_fits_in_a_process_of_its_own_and_replaces_one_that_dies() -> None:
    """Above ``sparse_above`` bots the fit runs in another process (its own session, so
    the terminal's Ctrl-C reaches only the ladder) with the same ratings, covariance
    included, as a fit here. A fit process that is killed loses nothing: the next
    refresh starts another from every counted result, whose first fit is exact (a full
    refit), and the ratings go on as here."""
    rows = _rows(200)
    here = LadderRatings(sparse_above=2, exact_every=60)
    there = LadderRatings(sparse_above=2, exact_every=60, separate_process=True)
    try:
        pids: list[int] = []
        for start in range(0, 200, 25):
            if start == 100:  # kill the fit's process between two refreshes
                os.kill(pids[-1], signal.SIGKILL)
            for ratings in (here, there):
                ratings.add_games(rows[start:start + 25])
                ratings.refresh(force=True)
            assert there.fit_pid is not None and there.fit_pid != os.getpid()
            assert os.getsid(there.fit_pid) != os.getsid(0)
            pids.append(there.fit_pid)
            if start < 100:  # the same fits, step by step
                _same_ratings(there.current, here.current)
                assert (there.exact_games, there.drift) == (here.exact_games, here.drift)
            elif start == 100:  # the new process's first fit: a full refit
                assert there.exact_games == there.games == 125
                full = fit_ratings(rows[:125])
                assert full is not None and there.current is not None
                for name in full.players:
                    assert there.current.ci95[name] == pytest.approx(full.ci95[name],
                                                                      abs=1e-6)
                _same_ratings(there.current, full, exact=False)
            else:  # the same maximum; the intervals were calibrated at other times
                _same_ratings(there.current, here.current, exact=False)
        assert here.fit_pid is None
        assert len(set(pids)) == 2 and pids[3] != pids[4]  # replaced once, after the kill
    finally:
        there.close()
    assert there.fit_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pids[-1], 0)


def test_messages_to_the_fit_process_sent_back_to_back_arrive_whole_and_in_order() -> None:
    """A read takes what has arrived, which may run past the message it reads into the
    next one (the fit to start from, then the first fit, are sent at once)."""
    ours, theirs = socket.socketpair()
    sending, receiving = _Channel(ours), _Channel(theirs)
    messages = [bytes(range(256)) * 5000, ("small", 1), list(range(100_000)), None]

    def send_all() -> None:
        for message in messages:
            sending.send(message)

    with ours, theirs:
        sender = threading.Thread(target=send_all)
        sender.start()
        assert [receiving.receive() for _ in messages] == messages
        sender.join()


def test_a_fit_process_that_stops_answering_is_killed_and_replaced(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A fit process that hangs (here: stopped by a signal) must not hold the ratings up
    for ever: past the answer timeout it is killed, and the refresh still gives the
    ratings of every counted game. (The short timeout is set once the process has
    answered, so that a slow start on a busy machine is not taken for a hang.)"""
    rows = _rows(60)
    ratings = LadderRatings(sparse_above=2, separate_process=True)
    try:
        ratings.add_games(rows[:30])
        ratings.refresh(force=True)
        stuck = ratings.fit_pid
        assert stuck is not None
        monkeypatch.setattr(fit_process, "ANSWER_TIMEOUT_S", 5.0)
        os.kill(stuck, signal.SIGSTOP)
        ratings.add_games(rows[30:])
        got = ratings.refresh(force=True)
        want = fit_ratings(rows)
        assert want is not None
        _same_ratings(got, want, exact=False)
        assert ratings.fit_pid != stuck
        assert "stopped answering" in caplog.text
        with pytest.raises(ChildProcessError):  # killed and reaped
            os.waitpid(stuck, os.WNOHANG)
    finally:
        ratings.close()
