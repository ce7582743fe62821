"""Tests of the inputs to the ratings and the duel statistics (harness/results/rating.py
and harness/results/head_to_head.py) on scheduled games."""

from __future__ import annotations

import math

import pytest

from harness.competition.seatings import ScheduledGame
from harness.errors import ConfigError
from harness.results.elo import Result
from harness.results.head_to_head import game_counts, pair_counts
from harness.results.rating import rating_results
from harness.results.sprt import Pentanomial, Trinomial

# --------------------------------------------------------------------------- statistics


def _game(key: str, seats: tuple[str, ...], sides: tuple[tuple[str, ...], ...],
          group: str | None = None, table: int = 0) -> ScheduledGame:
    return ScheduledGame(key, seats, 1, group or key, table, sides)


def test_rating_results_two_team_forms() -> None:
    two = _game("g1", ("a", "b"), (("a",), ("b",)))
    four = _game("g2", ("b", "a", "b", "a"), (("b",), ("a",)))
    mixed = _game("g3", ("a", "b", "c", "d"), (("a", "c"), ("b", "d")))
    got = rating_results([(two, (2, 1)), (four, (1, 2, 1, 2)), (mixed, (1, 2, 1, 2)),
                          (two, (1, 1))])
    assert got == [Result(("a",), ("b",), 0.0), Result(("b",), ("a",), 1.0),
                   Result(("a", "c"), ("b", "d"), 1.0), Result(("a",), ("b",), 0.5)]


def test_rating_results_cutthroat_pairwise_with_ties() -> None:
    g = _game("g", ("a", "b", "c"), (("a",), ("b",), ("c",)))
    got = rating_results([(g, (2, 1, 2))])
    assert got == [Result(("a",), ("b",), 0.0), Result(("a",), ("c",), 0.5),
                   Result(("b",), ("c",), 1.0)]
    with pytest.raises(ConfigError):
        rating_results([(g, (1, 2))])


def test_pair_counts_and_game_counts() -> None:
    def pair(i: int, first: tuple[int, int], second: tuple[int, int]
             ) -> list[tuple[ScheduledGame, tuple[int, ...]]]:
        group = f"p{i}"
        g0 = _game(f"{group}/t0", ("c", "o", "c", "o"), (("c",), ("o",)), group, 0)
        g1 = _game(f"{group}/t1", ("o", "c", "o", "c"), (("o",), ("c",)), group, 1)
        return [(g0, (*first, *first)), (g1, (*second, *second))]

    data = [
        *pair(0, (1, 2), (2, 1)),   # c wins both: 2
        *pair(1, (1, 2), (1, 2)),   # c wins t0, loses t1: 1
        *pair(2, (2, 1), (1, 2)),   # c loses both: 0
        *pair(3, (1, 1), (2, 1)),   # tie then win: 1.5
        *pair(4, (1, 2), (2, 1)),   # 2
        pair(5, (1, 2), (2, 1))[0],  # incomplete group: ignored by pair_counts
        (_game("x", ("c", "z", "c", "z"), (("c",), ("z",))), (1, 2, 1, 2)),  # other bot
        (_game("m", ("c", "o", "o", "c"), (("c", "o"), ("c", "o"))), (1, 2, 1, 2)),
    ]
    assert pair_counts("c", "o", data) == Pentanomial([1, 0, 1, 1, 2])
    assert pair_counts("o", "c", data) == Pentanomial([2, 1, 1, 0, 1])
    # Games: wins 2+1+0+1+2+1 = 7, losses 0+1+2+0+0 = 3, draws 1.
    assert game_counts("c", "o", data) == Trinomial([3, 1, 7])
    assert game_counts("c", "z", data) == Trinomial([0, 0, 1])
    assert math.isclose(pair_counts("c", "o", data).score(), (2 + 1 + 0 + 1.5 + 2) / 10)
