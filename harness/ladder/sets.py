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
        self._store.start_set(deal_set.key, deal_set.seed, json.dumps(list(deal_set.base)),
                              SetStatus.IN_PROGRESS.value, _now())

    def finish(self, progress: SetProgress) -> None:
        self._store.finish_set(progress.deal_set.key, progress.status.value,
                               progress.reason, _now())

    def close_unfinished(self, reason: str) -> int:
        """Mark every set still in progress as cut short; returns how many."""
        return self._store.close_sets(SetStatus.IN_PROGRESS.value, SetStatus.CUT_SHORT.value,
                                      reason, _now())

    def finished(self, keys: Iterable[str]) -> set[str]:
        """Those of the sets ``keys`` that are over (complete or cut short)."""
        return self._store.sets_not_in(SetStatus.IN_PROGRESS.value, set(keys))

    def state(self) -> tuple[int, int]:
        """What changes whenever a set starts or ends (two indexed reads)."""
        return self._store.sets_state(SetStatus.IN_PROGRESS.value)

    def sets(self) -> list[StoredSet]:
        return [StoredSet(r.key, tuple(json.loads(r.base_json)), SetStatus(r.status), r.reason)
                for r in self._store.sets()]

    @staticmethod
    def pair_counts(sets: Iterable[StoredSet]) -> Counter[Pair]:
        """Sets played per unordered pair of bots, for the matchmaker."""
        return Counter(pair for s in sets for pair in set_pairs(s.base))
