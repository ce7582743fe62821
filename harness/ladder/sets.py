"""The ladder's record of deal sets (the ``ladder_sets`` table): which sets started,
with which bots, and how each ended, so that a restarted ladder knows which
pairings were played (every stored game counts, whatever became of its set).

A set is written when it starts (``in_progress``) and again when it ends
(``complete`` or ``cut_short`` with the reason). A set still ``in_progress`` when the
ladder starts was cut short by a crash: :meth:`SetLog.close_unfinished` marks it so;
its games stored before the crash count like any other (see
:class:`~harness.ladder.matchmaking.SetProgress`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from harness.ladder.matchmaking import DealSet, Pair, SetProgress, SetStatus, set_pairs
from harness.storage.ladder import LadderStore

__all__ = ["SetLog", "StoredSet"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class StoredSet:
    key: str
    base: tuple[str, ...]
    status: SetStatus
    reason: str | None


class SetLog:
    """Deal sets in a :class:`LadderStore`."""

    def __init__(self, store: LadderStore) -> None:
        self._store = store

    def start(self, deal_set: DealSet) -> None:
        with self._store.writing() as conn:
            conn.execute("INSERT INTO ladder_sets (key, seed, base_json, status, started_at) "
                         "VALUES (?, ?, ?, ?, ?)",
                         (deal_set.key, deal_set.seed, json.dumps(list(deal_set.base)),
                          SetStatus.IN_PROGRESS.value, _now()))

    def finish(self, progress: SetProgress) -> None:
        with self._store.writing() as conn:
            conn.execute("UPDATE ladder_sets SET status = ?, reason = ?, finished_at = ? "
                         "WHERE key = ?", (progress.status.value, progress.reason, _now(),
                                           progress.deal_set.key))

    def close_unfinished(self, reason: str) -> int:
        """Mark every set still in progress as cut short; returns how many."""
        with self._store.writing() as conn:
            cursor = conn.execute(
                "UPDATE ladder_sets SET status = ?, reason = ?, finished_at = ? "
                "WHERE status = ?",
                (SetStatus.CUT_SHORT.value, reason, _now(), SetStatus.IN_PROGRESS.value))
            return cursor.rowcount

    def finished(self, keys: Iterable[str]) -> set[str]:
        """Those of the sets ``keys`` that are over (complete or cut short)."""
        wanted = sorted(set(keys))
        if not wanted:
            return set()
        with self._store.reading() as conn:
            rows = conn.execute(
                f"SELECT key FROM ladder_sets WHERE status != ? "
                f"AND key IN ({','.join('?' * len(wanted))})",
                (SetStatus.IN_PROGRESS.value, *wanted)).fetchall()
        return {k for (k,) in rows}

    def sets(self) -> list[StoredSet]:
        with self._store.reading() as conn:
            rows = conn.execute("SELECT key, base_json, status, reason FROM ladder_sets "
                                "ORDER BY key").fetchall()
        return [StoredSet(k, tuple(json.loads(b)), SetStatus(s), r) for k, b, s, r in rows]

    @staticmethod
    def pair_counts(sets: Iterable[StoredSet]) -> Counter[Pair]:
        """Sets played per unordered pair of bots, for the matchmaker."""
        return Counter(pair for s in sets for pair in set_pairs(s.base))
