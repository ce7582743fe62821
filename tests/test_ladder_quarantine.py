"""Quarantine: K faults in the last M games bench a bot, for longer each time, with the
reason; the operator can lift it; benches survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.ladder.quarantine import Quarantine, QuarantinePolicy
from harness.ladder.registry import Registry
from harness.storage.ladder import LadderStore

POLICY = QuarantinePolicy(bench_faults=2, bench_window=4, bench_seconds=100.0,
                          bench_growth=3.0,
                          bench_max_seconds=500.0)


@pytest.fixture
def store(tmp_path: Path) -> LadderStore:
    s = LadderStore(tmp_path / "ladder.db")
    Registry(s).register("flaky", "ann")
    Registry(s).register("solid", "bob")
    return s


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_k_faults_in_the_last_m_games_bench_the_bot(store: LadderStore) -> None:
    clock = Clock()
    q = Quarantine(store, POLICY, clock=clock)
    assert q.record("flaky", ["timeout"]) is None
    for _ in range(3):
        assert q.record("flaky") is None  # the first fault leaves the window of 4
    assert q.record("flaky", ["disconnect"]) is None
    bench = q.record("flaky", ["timeout", "timeout"])
    assert bench is not None and bench.repeat == 1
    assert bench.until == clock.now + 100.0
    assert bench.reason == "2 faulted games in the last 4: disconnect x1, timeout x2"
    assert q.benched("flaky") == bench and q.benched("solid") is None
    assert [b.bot for b in q.active()] == ["flaky"]


def test_a_bench_ends_on_its_own(store: LadderStore) -> None:
    clock = Clock()
    q = Quarantine(store, POLICY, clock=clock)
    q.record("flaky", ["crash"])
    assert q.record("flaky", ["crash"]) is not None
    clock.now += 99.0
    assert q.benched("flaky") is not None
    clock.now += 1.0
    assert q.benched("flaky") is None and q.active() == []


def test_each_repeat_benches_for_longer_up_to_the_cap(store: LadderStore) -> None:
    clock = Clock()
    q = Quarantine(store, POLICY, clock=clock)
    lengths = []
    for _ in range(4):
        q.record("flaky", ["timeout"])
        bench = q.record("flaky", ["timeout"])
        assert bench is not None
        lengths.append(bench.until - bench.started_at)
        clock.now = bench.until
    assert lengths == [100.0, 300.0, 500.0, 500.0]


def test_faults_while_benched_do_not_stack_benches(store: LadderStore) -> None:
    q = Quarantine(store, POLICY, clock=Clock())
    q.record("flaky", ["timeout"])
    assert q.record("flaky", ["timeout"]) is not None
    q.record("flaky", ["timeout"])
    assert q.record("flaky", ["timeout"]) is None
    assert len(q.history("flaky")) == 1


def test_the_operator_can_lift_a_bench_and_it_still_counts_as_a_repeat(
        store: LadderStore) -> None:
    clock = Clock()
    q = Quarantine(store, POLICY, clock=clock)
    q.record("flaky", ["timeout"])
    q.record("flaky", ["timeout"])
    lifted = q.lift("flaky")
    assert lifted is not None and lifted.lifted_at == clock.now
    assert q.benched("flaky") is None and q.lift("flaky") is None
    q.record("flaky", ["timeout"])
    again = q.record("flaky", ["timeout"])
    assert again is not None and again.repeat == 2


def test_benches_survive_a_restart(tmp_path: Path, store: LadderStore) -> None:
    clock = Clock()
    q = Quarantine(store, POLICY, clock=clock)
    q.record("flaky", ["timeout"])
    q.record("flaky", ["timeout"])
    store.close()
    with LadderStore(tmp_path / "ladder.db") as reopened:
        bench = Quarantine(reopened, POLICY, clock=clock).benched("flaky")
    assert bench is not None and bench.reason.startswith("2 faulted games")


def test_unknown_bots_and_bad_policies_are_refused(store: LadderStore) -> None:
    q = Quarantine(store, POLICY, clock=Clock())
    q.record("ghost", ["timeout"])
    with pytest.raises(ConfigError, match="ghost"):
        q.record("ghost", ["timeout"])
    with pytest.raises(ConfigError) as info:
        QuarantinePolicy(bench_faults=5, bench_window=4)
    assert info.value.option == "bench_faults"


def test_two_games_that_send_a_bot_to_the_bench_together_bench_it_once(
        store: LadderStore, tmp_path: Path) -> None:
    """A ladder counts each game on its loop and writes the bench later, through its
    writer's own connection: two games that ended together may both ask for a bench
    before either is written. The second finds the first in force."""
    clock = Clock()
    writer = LadderStore(tmp_path / "ladder.db")
    q = Quarantine(store, QuarantinePolicy(bench_faults=1, bench_window=2,
                                           bench_seconds=100.0),
                   clock=clock, bench_store=writer)
    first, second = q.count("flaky", ["timeout"]), q.count("flaky", ["crash"])
    assert first == "1 faulted games in the last 1: timeout x1"
    assert second == "1 faulted games in the last 1: crash x1"
    bench = q.bench("flaky", first)
    assert bench is not None and bench.repeat == 1
    assert q.bench("flaky", second) is None
    assert q.benched("flaky") == bench and len(q.history("flaky")) == 1
    clock.now += 100.0
    again = q.bench("flaky", second)
    assert again is not None and again.repeat == 2 and again.until == clock.now + 200.0
