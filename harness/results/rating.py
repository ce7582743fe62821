"""From stored games to Elo: the inputs to the fit, the fit, clean sweeps and the rating
history.

Two-team forms give one :class:`~harness.results.elo.Result` per game, team 0's side against
team 1's; cutthroat gives one per pair of seats. A bot that lost (or won) every rated game
has a rating set only by the fit's prior: :func:`sweep_of` says so, and the report and
``summary.json`` give only the meaningful bound of its interval ("all games lost: below
X") instead of a number that looks measured.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from harness.errors import ConfigError, HarnessError
from harness.results.counting import SidedGame, check_places, place_score, rated
from harness.results.elo import Ratings, Result, fit
from harness.results.rating_text import ANCHOR_MARK, Sweep, rating_text
from harness.results.rows import rated_games
from harness.storage.results import GameRow

__all__ = [
    "ANCHOR_MARK",
    "Sweep",
    "fit_ratings",
    "player_json",
    "rating_history",
    "rating_results",
    "rating_text",
    "sweep_of",
]


def rating_results(games: Iterable[tuple[SidedGame, Sequence[int]]]) -> list[Result]:
    """Rating results of finished games, given as ``(game, places per seat)``.

    Two-team forms give one :class:`~harness.results.elo.Result` per game, team 0's side
    against team 1's, scoring 1, 0 or (equal places) 0.5. Cutthroat gives one Result per
    pair of seats ``(i, j)``, ``i < j``, scored from their places the same way.
    """
    results: list[Result] = []
    for game, places in games:
        values = check_places(game, places)
        # Seat t is on team t for every t below the number of teams.
        for i, j in itertools.combinations(range(len(game.sides)), 2):
            results.append(Result(game.sides[i], game.sides[j],
                                  place_score(values[i], values[j])))
    return results


def fit_ratings(rows: Iterable[GameRow], *, anchor: str | None = None,
                anchor_rating: float = 0.0) -> Ratings | None:
    """The Elo fit over the rated games, or None when there are none. An unknown anchor
    raises :class:`HarnessError` naming ``--anchor``."""
    results = rating_results(rated_games(rows))
    if not results:
        return None
    try:
        return fit(results, anchor=anchor, anchor_rating=anchor_rating)
    except ConfigError as e:
        if e.option == "anchor":
            raise HarnessError(f"--anchor: {e.message}") from e
        raise




def sweep_of(ratings: Ratings, name: str) -> tuple[Sweep, float | None] | None:
    """``(sweep, bound)`` when ``name`` lost (or won) every game it was rated on, else
    None. The anchor is never a sweep: its rating is fixed, whatever its results.

    The bound is the end of its 95% interval that the data supports (its rating is below
    the upper end, or above the lower end), moved past the rating of every opponent it
    met one against one whose rating is not itself a sweep's (the anchor, or a measured
    one): a bot that beat the anchor in every game is never shown below the anchor, and
    one that lost every game to a measured bot never above it. A bound on the wrong side
    of the middle of the scale (the anchor's rating, or 0 for ratings of mean 0) says
    nothing yet ("above -106" for a bot that won its 2 games): then it is None."""
    if ratings.games[name] <= 0 or name == ratings.anchor:
        return None
    if ratings.score[name] not in (0.0, 1.0):
        return None
    low, high = ratings.interval(name)
    measured = [ratings.elo[o] for o in ratings.opponents.get(name, ())
                if o == ratings.anchor or ratings.score[o] not in (0.0, 1.0)]
    middle = ratings.elo[ratings.anchor] if ratings.anchor else 0.0
    if ratings.score[name] == 0.0:
        below = min([high, *measured])
        return Sweep.ALL_LOST, (below if round(below) <= round(middle) else None)
    above = max([low, *measured])
    return Sweep.ALL_WON, (above if round(above) >= round(middle) else None)


def player_json(ratings: Ratings, name: str) -> dict[str, Any]:
    """One rated player as JSON: ``name``, ``elo``, ``ci95``, ``lower``, ``upper``,
    ``games``, ``score`` and ``sweep`` (``"all_lost"``, ``"all_won"`` or None). For a
    sweep, ``elo`` and ``ci95`` are None and only the supported bound is given (as
    :func:`sweep_of` gives it)."""
    low, high = ratings.interval(name)
    data: dict[str, Any] = {
        "name": name, "elo": ratings.elo[name], "ci95": ratings.ci95[name],
        "lower": low, "upper": high, "games": ratings.games[name],
        "score": ratings.score[name], "sweep": None,
    }
    sweep = sweep_of(ratings, name)
    if sweep is not None:
        data.update(elo=None, ci95=None, sweep=sweep[0].value)
        if sweep[0] is Sweep.ALL_LOST:
            data.update(lower=None, upper=sweep[1])
        else:
            data.update(lower=sweep[1], upper=None)
    return data


def _checkpoints(total: int, points: int) -> list[int]:
    steps = max(1, min(points, total))
    return sorted({round(total * k / steps) for k in range(1, steps + 1)} - {0})


def rating_history(rows: Sequence[GameRow], *, points: int = 20, anchor: str | None = None,
                   anchor_rating: float = 0.0) -> list[dict[str, Any]]:
    """The ratings as games accumulate: at up to ``points`` checkpoints spread evenly over
    the rated games (in the order given, oldest first), ``{"games": n, "players": [...]}``
    with the fit over the first ``n`` rated games (players as in :func:`player_json`,
    best first). An anchor applies from the first checkpoint at which it has played."""
    kept = [r for r in rows if rated(r)]
    history: list[dict[str, Any]] = []
    for n in _checkpoints(len(kept), points):
        results = rating_results(rated_games(kept[:n]))
        names = {p for res in results for p in (*res.side_a, *res.side_b)}
        ratings = fit(results, anchor=anchor if anchor in names else None,
                      anchor_rating=anchor_rating)
        history.append({"games": n,
                        "players": [player_json(ratings, p) for p in ratings.players]})
    return history
