"""The mapping between a played game and its stored row, both ways.

:func:`to_row` turns the referee's :class:`~harness.referee.outcome.GameResult` for a
scheduled game into the :class:`~harness.storage.results.GameRow` the store keeps; the record
gains a ``tournament`` entry (id, key, duplicate group, table and rating sides) so that
:func:`sided_game` can give the results the scheduled game back from the row alone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.referee.outcome import GameResult
from harness.results.counting import SidedGame, rated
from harness.storage.results import GameRow

__all__ = ["StoredGame", "rated_games", "sided_game", "to_row"]


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="milliseconds")


def to_row(tournament_id: str, game: SidedGame, result: GameResult) -> GameRow:
    """The row to store for ``result``, the outcome of the scheduled ``game``."""
    record = dict(result.record)
    record["tournament"] = {"id": tournament_id, "key": game.key, "group": game.group,
                            "table": game.table, "sides": [list(s) for s in game.sides]}
    started = float(record.get("started_at") or 0.0)
    return GameRow(
        tournament_id=tournament_id, game_key=game.key, form=str(record["rules"]["form"]),
        seed=game.seed, seats=game.seats, termination=result.termination,
        scores=result.scores, ranking=result.places, hands=result.hands,
        started_at=_iso(started), finished_at=_iso(started + result.duration_s),
        duration_s=result.duration_s, record=record, faults=result.faults,
    )


@dataclass(frozen=True)
class StoredGame:
    """A scheduled game as recovered from its stored row (see :class:`SidedGame`)."""

    key: str
    seats: tuple[str, ...]
    seed: int
    group: str
    table: int
    sides: tuple[tuple[str, ...], ...]


def sided_game(row: GameRow) -> StoredGame:
    """The scheduled game a stored row was played for (its rating sides included)."""
    t = row.record.get("tournament") or {}
    sides = t.get("sides")
    if sides is None:  # a game stored by something else: one side per seat
        sides = [[name] for name in row.seats]
    return StoredGame(key=row.game_key, seats=tuple(row.seats), seed=row.seed,
                      group=str(t.get("group", row.game_key)), table=int(t.get("table", 0)),
                      sides=tuple(tuple(s) for s in sides))


def rated_games(rows: Iterable[GameRow]) -> list[tuple[StoredGame, Sequence[int]]]:
    """The rated games (see :func:`~harness.results.counting.rated`) with their places."""
    return [(sided_game(r), r.ranking) for r in rows if rated(r)]
