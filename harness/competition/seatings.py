"""Who sits where in a game of a competition, with which deals, in which duplicate group:
the vocabulary a tournament's schedule (:mod:`harness.tournament.schedule`) and the
ladder's matchmaker (:mod:`harness.ladder.matchmaking`) share. Pure: no I/O, no clock,
no randomness beyond the competition's seed.

*Seats and teams.* A game has one entrant name per seat. In four-handed play the teams
are the partnerships ``seat % 2`` (seats 0+2 against 1+3); in two-handed play and in
cutthroat every seat is its own team. In every form, seat ``t`` (for ``t`` below the
number of teams) is on team ``t``, and a seat's team is ``seat % number_of_teams``.

*Partnerships.* ``"same"``: a four-handed team is two copies of one bot; ``"mixed"``:
two different bots (only four-handed euchre has partnerships).

*Rating sides.* :attr:`ScheduledGame.sides` gives, per team, the side that
:mod:`harness.results.elo` rates (:func:`sides`): ``(name,)`` for a single seat or for a
four-handed team of two copies of one bot ("same" partnerships), and the sorted pair of
names for a four-handed team in "mixed" partnerships (so ``("a", "a")`` when a bot
partners itself there; every side of a mixed competition has two members, as the rating
model requires).

*Duplicate groups.* With duplicate deals every deal set (one seed) is played on one table
per team (:func:`tables`), the seats rotated by one position from table to table: table
``t`` seats ``base[(s + t) % players]`` at seat ``s`` (:func:`rotate`). With the same
seed the engine deals the same cards to the same seat numbers and the same first
dealer, so every entrant holds, at some table, the cards each opponent side held at
another. For two teams that is a swap of the sides' seats (``ab``/``ba``,
``abab``/``baba``; mixed ``acbd`` becomes ``cbda``); for cutthroat it is the three
rotations ``abc``, ``bca``, ``cab``. Each entrant also sits on the first dealer's team
at exactly one table of the group.

*Keys.* A game's key is its group's key and, with duplicate deals, ``/t<table>``
(:func:`table_key`); :func:`group_of` takes the table part off again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.rules.config import Form
from harness.rules.scoring import team_count

__all__ = [
    "PARTNERSHIPS",
    "ScheduledGame",
    "check_partnerships",
    "duplicate_group",
    "group_of",
    "rotate",
    "sides",
    "table_key",
    "tables",
]

PARTNERSHIPS = ("same", "mixed")


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game to play: who sits where, with which deals, in which duplicate group."""

    key: str  # unique in the competition, deterministic; sorting keys gives play order
    seats: tuple[str, ...]  # entrant name per seat
    seed: int  # deal seed; the same for every table of a duplicate group
    group: str  # the duplicate group; == key when not duplicate
    table: int  # index within the group
    sides: tuple[tuple[str, ...], ...]  # per team, the rating side

    def team_of(self, seat: int) -> int:
        """The team of ``seat``: ``seat % number_of_teams``."""
        return seat % len(self.sides)


def check_partnerships(form: Form, partnerships: str) -> bool:
    """Check ``partnerships`` (ConfigError naming the key); True for mixed."""
    if partnerships not in PARTNERSHIPS:
        raise ConfigError("partnerships", f"must be 'same' or 'mixed'; got {partnerships!r}")
    if partnerships == "mixed" and form is not Form.FOUR_HANDED:
        raise ConfigError("partnerships", "only four-handed euchre has partnerships; "
                                          "'mixed' needs form = four-handed")
    return partnerships == "mixed"


def tables(form: Form, duplicate: bool) -> int:
    """Tables of one deal set: one per team with duplicate deals, else one."""
    return team_count(form) if duplicate else 1


def rotate(base: tuple[str, ...], rotation: int) -> tuple[str, ...]:
    """``base`` turned by ``rotation`` seats: seat ``s`` gets ``base[(s + rotation) % n]``."""
    n = len(base)
    return tuple(base[(s + rotation) % n] for s in range(n))


def sides(form: Form, seats: tuple[str, ...], mixed: bool) -> tuple[tuple[str, ...], ...]:
    """The rating side of each team of a game seated ``seats`` (module docstring)."""
    if form is not Form.FOUR_HANDED:
        return tuple((name,) for name in seats)
    if mixed:
        return (tuple(sorted(seats[0::2])), tuple(sorted(seats[1::2])))
    return ((seats[0],), (seats[1],))


def table_key(group: str, table: int, duplicate: bool) -> str:
    """The key of table ``table`` of duplicate group ``group``; the group's own key
    without duplicate deals."""
    return f"{group}/t{table}" if duplicate else group


def group_of(game_key: str) -> str:
    """The duplicate group of a game (a ladder's deal set): its key without the ``/tN``
    table part, as :func:`table_key` makes keys."""
    return game_key.rsplit("/t", 1)[0]


def duplicate_group(group: str, base: Sequence[str], seed: int, form: Form, *,
                    mixed: bool, duplicate: bool,
                    rotation: int = 0) -> tuple[ScheduledGame, ...]:
    """The games of one deal set: one per table (:func:`tables`), all with ``seed``,
    table ``t`` seated ``base`` rotated by ``rotation + t``."""
    start = tuple(base)
    out = []
    for t in range(tables(form, duplicate)):
        seats = rotate(start, rotation + t)
        out.append(ScheduledGame(key=table_key(group, t, duplicate), seats=seats, seed=seed,
                                 group=group, table=t, sides=sides(form, seats, mixed)))
    return tuple(out)
