"""Which games count, how places become scores, and which seat is on which team.

Which games count. A stored game is *counted* unless it was interrupted (an interrupted
game has no result; its faults are not counted either). Forfeited games count in full.
A counted game is *rated* when every seat has a place (1 = first).

Place-to-score. Two teams (or two cutthroat seats) compare their places: 1 to the one
placed higher, 0.5 each when level, 0 to the one placed lower.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from harness.errors import ConfigError
from harness.referee.outcome import Termination
from harness.rules.config import Form
from harness.rules.scoring import team_of
from harness.storage.results import GameRow

__all__ = [
    "SidedGame",
    "check_places",
    "counted_games",
    "form_of",
    "place_score",
    "rated",
    "team_members",
]

_FORMS = {form.players: form for form in Form}


class SidedGame(Protocol):
    """What the results need of a scheduled game (``harness.competition.seatings``'s
    ``ScheduledGame`` is one; :func:`harness.results.rows.sided_game` rebuilds one from
    a stored row): who sat where, its duplicate group and table, and per team the side
    the ratings rate."""

    @property
    def key(self) -> str: ...
    @property
    def seats(self) -> tuple[str, ...]: ...
    @property
    def seed(self) -> int: ...
    @property
    def group(self) -> str: ...
    @property
    def table(self) -> int: ...
    @property
    def sides(self) -> tuple[tuple[str, ...], ...]: ...


def form_of(seats: Sequence[str]) -> Form:
    """The form of a game with these seats (2, 3 or 4)."""
    try:
        return _FORMS[len(seats)]
    except KeyError:
        raise ValueError(f"a game has 2, 3 or 4 seats; got {len(seats)}") from None


def team_members(seats: Sequence[str]) -> dict[int, set[str]]:
    """Team -> the entrant names seated on it (see :func:`harness.rules.scoring.team_of`)."""
    form = form_of(seats)
    members: dict[int, set[str]] = {}
    for seat, name in enumerate(seats):
        members.setdefault(team_of(form, seat), set()).add(name)
    return members


def counted_games(games: Iterable[GameRow]) -> list[GameRow]:
    """The games statistics are computed over: all but the interrupted ones."""
    return [g for g in games if g.termination is not Termination.INTERRUPTED]


def rated(row: GameRow) -> bool:
    """A counted game in which every seat has a place."""
    return row.termination is not Termination.INTERRUPTED and all(p > 0 for p in row.ranking)


def place_score(mine: int, theirs: int) -> float:
    """The score of placing ``mine`` against ``theirs``: 1, 0.5 when level, or 0."""
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def check_places(game: SidedGame, places: Sequence[int]) -> tuple[int, ...]:
    """``places`` as a tuple, after checking there is one whole place from 1 per seat."""
    values = tuple(places)
    if len(values) != len(game.seats):
        raise ConfigError("places", f"{game.key}: needs one place per seat "
                                    f"({len(game.seats)}); got {values}")
    if not all(isinstance(p, int) and p >= 1 for p in values):
        raise ConfigError("places", f"{game.key}: places are whole numbers from 1; "
                                    f"got {values}")
    return values
