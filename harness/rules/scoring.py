"""The scoring tables of docs/rules.md sections 3, 4 and 5, as data plus one function."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

from harness.rules.config import Form


class HandKind(enum.Enum):
    """How a hand ended, from the makers' point of view."""

    THROWN_IN = "thrown_in"  # everybody passed twice; nobody scores
    MADE = "made"  # makers took 3 or 4
    MARCH = "march"  # makers took all 5
    EUCHRED = "euchred"  # makers took fewer than 3
    LONE_DEFENCE = "lone_defence"  # a lone defender took 3 or 4
    LONE_DEFENCE_MARCH = "lone_defence_march"  # a lone defender took all 5


# (form, kind, maker_alone) -> points. Who receives them follows from the kind.
SCORING_TABLE: dict[tuple[Form, HandKind, bool], int] = {
    (Form.FOUR_HANDED, HandKind.MADE, False): 1,
    (Form.FOUR_HANDED, HandKind.MARCH, False): 2,
    (Form.FOUR_HANDED, HandKind.MADE, True): 1,
    (Form.FOUR_HANDED, HandKind.MARCH, True): 4,
    (Form.FOUR_HANDED, HandKind.EUCHRED, False): 2,
    (Form.FOUR_HANDED, HandKind.EUCHRED, True): 2,
    (Form.FOUR_HANDED, HandKind.LONE_DEFENCE, False): 2,
    (Form.FOUR_HANDED, HandKind.LONE_DEFENCE, True): 2,
    (Form.FOUR_HANDED, HandKind.LONE_DEFENCE_MARCH, False): 4,
    (Form.FOUR_HANDED, HandKind.LONE_DEFENCE_MARCH, True): 4,
    (Form.TWO_HANDED, HandKind.MADE, False): 1,
    (Form.TWO_HANDED, HandKind.MARCH, False): 2,
    (Form.TWO_HANDED, HandKind.EUCHRED, False): 2,
    # Cutthroat: no bonus for the maker going alone (docs/rules.md section 5).
    (Form.CUTTHROAT, HandKind.MADE, False): 1,
    (Form.CUTTHROAT, HandKind.MARCH, False): 3,
    (Form.CUTTHROAT, HandKind.MADE, True): 1,
    (Form.CUTTHROAT, HandKind.MARCH, True): 3,
    (Form.CUTTHROAT, HandKind.EUCHRED, False): 2,
    (Form.CUTTHROAT, HandKind.EUCHRED, True): 2,
    (Form.CUTTHROAT, HandKind.LONE_DEFENCE, False): 2,
    (Form.CUTTHROAT, HandKind.LONE_DEFENCE, True): 2,
    (Form.CUTTHROAT, HandKind.LONE_DEFENCE_MARCH, False): 4,
    (Form.CUTTHROAT, HandKind.LONE_DEFENCE_MARCH, True): 4,
}


def team_of(form: Form, seat: int) -> int:
    """The scoring unit of a seat: the partnership (seat % 2) in four-handed play, the
    seat itself otherwise."""
    return seat % 2 if form is Form.FOUR_HANDED else seat


def team_count(form: Form) -> int:
    return 2 if form is not Form.CUTTHROAT else 3


class HandResult(NamedTuple):
    """The outcome of one hand (immutable). ``points`` is indexed by team (see
    :func:`team_of`)."""

    kind: HandKind
    points: tuple[int, ...]
    maker: int | None
    makers_tricks: int
    maker_alone: bool
    defender_alone: int | None  # the seat of a lone defender, if any
    tricks_won: tuple[int, ...]  # per seat

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind.value,
            "points": list(self.points),
            "maker": self.maker,
            "makers_tricks": self.makers_tricks,
            "maker_alone": self.maker_alone,
            "defender_alone": self.defender_alone,
            "tricks_won": list(self.tricks_won),
        }


def score_hand(form: Form, maker: int, alone: Sequence[int],
               tricks_won: Sequence[int]) -> HandResult:
    """Score a played hand. ``alone`` lists the seats that went alone."""
    n = len(tricks_won)
    four = form is Form.FOUR_HANDED
    maker_team = maker % 2 if four else maker
    makers_tricks = (tricks_won[maker_team] + tricks_won[maker_team + 2] if four
                     else tricks_won[maker])
    maker_alone = False
    lone_def = None
    for s in alone:
        if (s % 2 if four else s) == maker_team:
            maker_alone = True
        else:
            lone_def = s
    if makers_tricks >= 3:
        kind = HandKind.MARCH if makers_tricks == 5 else HandKind.MADE
    elif lone_def is not None:
        kind = HandKind.LONE_DEFENCE_MARCH if makers_tricks == 0 else HandKind.LONE_DEFENCE
    else:
        kind = HandKind.EUCHRED
    value = SCORING_TABLE[(form, kind, maker_alone)]
    teams = team_count(form)
    if kind in (HandKind.MADE, HandKind.MARCH):
        points = tuple(value if t == maker_team else 0 for t in range(teams))
    else:
        points = tuple(0 if t == maker_team else value for t in range(teams))
    return HandResult(kind, points, maker, makers_tricks, maker_alone, lone_def,
                      tuple(tricks_won[s] for s in range(n)))


def thrown_in(form: Form, players: int) -> HandResult:
    return HandResult(HandKind.THROWN_IN, (0,) * team_count(form), None, 0, False, None,
                      (0,) * players)
