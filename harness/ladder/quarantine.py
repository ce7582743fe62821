"""Benching bots that fault too often.

A bot with ``bench_faults`` faulted games among its last ``bench_window`` games is
*benched*: the matchmaker gives it no games until the bench ends. The n-th bench of a bot
lasts ``bench_seconds * bench_growth ** (n - 1)``, capped at ``bench_max_seconds``, so a
bot that keeps faulting sits out longer each time. Every bench records its reason (how
many faults of which kinds) for the standings, and the operator can
:meth:`Quarantine.lift` it early.
Benching clears the bot's window: it comes back with a clean slate of recent games,
but its count of past benches (which sets the next bench's length) stays.

A game counts once per bot however many faults the bot had in it. Benches are kept in
the ``ladder_benches`` table, so they survive a restart; the window of recent games is
in memory and is refilled by the caller with :meth:`Quarantine.remember` after a
restart (from the stored games, oldest first).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.competition.policies import QuarantinePolicy
from harness.errors import NotFoundError
from harness.storage.ladder import BenchRow, LadderStore

__all__ = ["Bench", "Quarantine", "QuarantinePolicy"]


@dataclass(frozen=True, slots=True)
class Bench:
    """One bench of one bot (times are the quarantine clock's, in seconds)."""

    bot: str
    started_at: float
    until: float
    repeat: int
    reason: str
    lifted_at: float | None = None

    def active(self, now: float) -> bool:
        return self.lifted_at is None and now < self.until


class Quarantine:
    """Counts faults per bot and benches those over the limit. ``clock`` gives seconds
    (wall-clock by default, since benches outlive the process). New benches are written
    through ``bench_store`` (default: ``store``, through which everything else goes)."""

    def __init__(self, store: LadderStore, policy: QuarantinePolicy | None = None, *,
                 clock: Callable[[], float] = time.time,
                 bench_store: LadderStore | None = None) -> None:
        self._store = store
        self._bench_store = store if bench_store is None else bench_store
        self.policy = policy or QuarantinePolicy()
        self._clock = clock
        self._recent: dict[str, deque[tuple[str, ...]]] = {}

    def _benches(self, bot: str) -> list[Bench]:
        return [Bench(*row) for row in self._store.benches(bot)]

    def remember(self, bot: str, faults: Iterable[str] = ()) -> None:
        """Put one past game of ``bot`` in its window without benching it (to refill
        the windows from stored games after a restart, oldest first)."""
        self._recent.setdefault(bot, deque(maxlen=self.policy.bench_window)).append(tuple(faults))

    def record(self, bot: str, faults: Iterable[str] = ()) -> Bench | None:
        """Count one finished game of ``bot`` with the kinds of its faults in it (none
        for a clean game). Returns the new bench when this game sends it to the bench:
        :meth:`count`, then :meth:`bench`."""
        reason = self.count(bot, faults)
        return None if reason is None else self.bench(bot, reason)

    def count(self, bot: str, faults: Iterable[str] = ()) -> str | None:
        """Count one finished game of ``bot`` (in memory, and one read of the store
        when the game puts it over the limit). Returns the reason to bench it, which
        the caller then hands to :meth:`bench`, or None. The window starts again
        empty once a reason is returned."""
        kinds = tuple(faults)
        window = self._recent.setdefault(bot, deque(maxlen=self.policy.bench_window))
        window.append(kinds)
        faulted = [k for k in window if k]
        if len(faulted) < self.policy.bench_faults or self.benched(bot) is not None:
            return None
        summary = Counter(kind for game in faulted for kind in game)
        reason = (f"{len(faulted)} faulted games in the last {len(window)}: "
                  + ", ".join(f"{kind} x{n}" for kind, n in sorted(summary.items())))
        window.clear()
        return reason

    def bench(self, bot: str, reason: str) -> Bench | None:
        """Bench ``bot`` for ``reason`` from now, written through ``bench_store`` (a
        ladder's writer connection, so that it runs on the writer's thread and never
        waits for the store on the event loop). None when a bench is already in force
        (two games that ended together both sent it)."""
        now = self._clock()
        store = self._bench_store
        with store.writing():
            past = [Bench(*row) for row in store.benches(bot)]
            if any(b.active(now) for b in past):
                return None
            bench = Bench(bot, now, now + self.policy.duration(len(past) + 1), len(past) + 1,
                          reason)
            if not store.add_bench(BenchRow(bot, bench.started_at, bench.until,
                                            bench.repeat, bench.reason, None)):
                raise NotFoundError("name", f"no bot named {bot!r} is registered")
        return bench

    def benched(self, bot: str) -> Bench | None:
        """``bot``'s bench in force now, or None (also for an unknown name)."""
        now = self._clock()
        active = [b for b in self._benches(bot) if b.active(now)]
        return active[-1] if active else None

    def active(self) -> list[Bench]:
        """Every bench in force now, by bot name."""
        return [Bench(*row) for row in self._store.active_benches(self._clock())]

    def history(self, bot: str) -> list[Bench]:
        """Every bench ``bot`` has had, oldest first (none for an unknown name)."""
        return self._benches(bot)

    def lift(self, bot: str) -> Bench | None:
        """End ``bot``'s bench now (the operator's call); returns the lifted bench, or
        None when it was not benched. The lifted bench still counts as a repeat."""
        bench = self.benched(bot)
        if bench is None:
            return None
        now = self._clock()
        self._store.lift_benches(bot, now)
        self._recent.pop(bot, None)
        return Bench(bot, bench.started_at, bench.until, bench.repeat, bench.reason, now)
