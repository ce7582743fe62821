"""One entrant against another: placements over every counted game, and the Elo of a
bot against another from their direct duels.

:func:`head_to_head` compares every pair of teams in every counted game with a result.
A *duel* is a two-team game in which one team is all one bot and the other all another
(two-handed, or same-bot partnerships): :func:`pair_counts` gives the pentanomial of a
duel's complete duplicate pairs, :func:`game_counts` the trinomial of its games, and
:func:`duel_counts` the statistics the report shows for every pair of bots.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from harness.results.counting import (
    SidedGame,
    check_places,
    counted_games,
    place_score,
    team_members,
)
from harness.results.rows import rated_games
from harness.results.sprt import Pentanomial, Trinomial
from harness.storage.results import GameRow

__all__ = [
    "HeadToHead",
    "duel_counts",
    "game_counts",
    "head_to_head",
    "head_to_head_score",
    "pair_counts",
]

Games = Iterable[tuple[SidedGame, Sequence[int]]]


class HeadToHead(NamedTuple):
    """How one entrant fared against another: ``points`` (1 per game placed above, 0.5
    per game placed level) out of ``games``."""

    points: float
    games: int

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


def head_to_head(games: Iterable[GameRow]) -> dict[str, dict[str, HeadToHead]]:
    """``h[a][b]``: how ``a`` scored against ``b`` over the counted games with a result.

    In each game, every pair of distinct teams is compared by place (see
    :func:`~harness.results.counting.place_score`), and that result goes to every pair of
    distinct entrant names across the two teams, once per game and team pair. So a
    same-bot partnership meets the other partnership once per game, each member of a
    mixed partnership meets each opponent once, and in cutthroat each of the three pairs
    of seats is one pairwise result. ``h[b][a]`` mirrors ``h[a][b]``.
    """
    tally: dict[tuple[str, str], list[float]] = {}
    for row in counted_games(games):
        if not row.ranking or 0 in row.ranking:
            continue
        members = team_members(row.seats)
        place = {team: row.ranking[team] for team in members}  # seat t is on team t
        for ta, tb in itertools.combinations(sorted(members), 2):
            score = place_score(place[ta], place[tb])
            for a in members[ta]:
                for b in members[tb] - {a}:
                    for key, pts in (((a, b), score), ((b, a), 1.0 - score)):
                        cell = tally.setdefault(key, [0.0, 0.0])
                        cell[0] += pts
                        cell[1] += 1
    out: dict[str, dict[str, HeadToHead]] = {}
    for (a, b), (pts, n) in sorted(tally.items()):
        out.setdefault(a, {})[b] = HeadToHead(pts, int(n))
    return out


def _duel(game: SidedGame) -> tuple[str, str] | None:
    """``(team 0's bot, team 1's bot)`` if ``game`` is a duel, else None."""
    members = team_members(game.seats)
    if len(members) != 2 or len(members[0]) != 1 or len(members[1]) != 1:
        return None
    (a,), (b,) = members[0], members[1]
    return None if a == b else (a, b)


def head_to_head_score(game: SidedGame, places: Sequence[int], candidate: str,
                       opponent: str) -> float | None:
    """``candidate``'s score (1, 0.5 for equal places, 0) in a duel of ``candidate``
    against ``opponent``; None for any other game."""
    duel = _duel(game)
    if duel is None or set(duel) != {candidate, opponent}:
        return None
    values = check_places(game, places)
    mine = duel.index(candidate)
    return place_score(values[mine], values[1 - mine])


def _duel_scores(games: Games) -> dict[tuple[str, str], dict[str, dict[int, float]]]:
    """``(a, b)`` -> group -> table -> ``a``'s score, for both orders of every duel."""
    out: dict[tuple[str, str], dict[str, dict[int, float]]] = {}
    for game, places in games:
        duel = _duel(game)
        if duel is None:
            continue
        a, b = duel
        values = check_places(game, places)
        score = place_score(values[0], values[1])
        out.setdefault((a, b), {}).setdefault(game.group, {})[game.table] = score
        out.setdefault((b, a), {}).setdefault(game.group, {})[game.table] = 1.0 - score
    return out


def _pentanomial(groups: dict[str, dict[int, float]]) -> Pentanomial:
    return Pentanomial.from_pair_scores(
        t[0] + t[1] for t in groups.values() if set(t) == {0, 1})


def _trinomial(groups: dict[str, dict[int, float]]) -> Trinomial:
    return Trinomial.from_scores(s for tables in groups.values() for s in tables.values())


def pair_counts(candidate: str, opponent: str, games: Games) -> Pentanomial:
    """The pentanomial of ``candidate`` against ``opponent`` over complete duplicate pairs:
    groups with exactly tables 0 and 1 among their duels. Other games and incomplete
    groups are ignored."""
    return _pentanomial(_duel_scores(games).get((candidate, opponent), {}))


def game_counts(candidate: str, opponent: str, games: Games) -> Trinomial:
    """The trinomial (losses, draws, wins) of ``candidate`` against ``opponent`` over
    every duel, duplicate or not."""
    return _trinomial(_duel_scores(games).get((candidate, opponent), {}))


def duel_counts(rows: Iterable[GameRow]) -> dict[str, dict[str, Pentanomial | Trinomial]]:
    """``d[a][b]``: ``a``'s statistics against ``b`` over their rated duels: the
    pentanomial of complete duplicate pairs when there is at least one, else the
    trinomial of their games. Pairs of bots that never met in a duel are absent."""
    out: dict[str, dict[str, Pentanomial | Trinomial]] = {}
    for (a, b), groups in sorted(_duel_scores(rated_games(rows)).items()):
        pairs = _pentanomial(groups)
        out.setdefault(a, {})[b] = pairs if pairs.n else _trinomial(groups)
    return out
