"""Everything the HTML pages show, read from a results store in one place.

This module is the only one in :mod:`harness.web` that knows where the results logic
lives (the store, the rating fit, the statistics, the SPRT and ``summary.json``'s layout);
the pages take the plain data it returns. :func:`load_report` gives a
:class:`ReportData`: the same ``summary`` dict that ``summary.json`` holds, plus what
``summary.json`` does not: one row per stored game, the ratings fitted over growing
prefixes of the games (convergence) and, for an SPRT, the LLR after each pair.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.ratings import fit
from harness.report import summary_json
from harness.sprt import Pentanomial, Sprt, Trinomial
from harness.store import GameRow, ResultsStore
from harness.tournament.results import fit_ratings, rated_games
from harness.tournament.schedule import head_to_head_score, rating_results
from harness.tournament.stats import compute_stats

__all__ = ["CONVERGENCE_POINTS", "GameSummary", "ReportData", "load_report"]

CONVERGENCE_POINTS = 24
"""At most this many refits for the convergence chart (the last one uses every game)."""


@dataclasses.dataclass(frozen=True)
class GameSummary:
    """One stored game as the report's game list shows it."""

    ref: str  # "tournament/key", what `replay` accepts
    key: str
    seats: tuple[str, ...]
    termination: str
    scores: tuple[int, ...]
    winners: tuple[str, ...]  # names of the seats placed first (empty: no result)
    hands: int
    faults: int
    duration_s: float
    record: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class ReportData:
    """What the report page shows. ``convergence`` maps each player to its
    ``(games rated so far, elo, ci95)`` points; ``llr`` holds ``(pairs or games, llr)``
    points of an SPRT (empty otherwise)."""

    title: str
    summary: dict[str, Any]
    rules_text: list[str]
    games: list[GameSummary]
    convergence: dict[str, list[tuple[int, float, float]]]
    llr: list[tuple[int, float]]
    llr_unit: str  # "pairs" or "games"


def convergence(rows: Sequence[GameRow], *, anchor: str | None = None,
                anchor_rating: float = 0.0, points: int = CONVERGENCE_POINTS
                ) -> dict[str, list[tuple[int, float, float]]]:
    """Each player's rating fitted over the first k rated games, for up to ``points``
    values of k spread evenly up to all of them. A prefix in which the anchor has not
    played yet is fitted with mean 0 instead."""
    rated = rated_games(rows)
    n = len(rated)
    series: dict[str, list[tuple[int, float, float]]] = {}
    if n == 0:
        return series
    steps = sorted({max(1, math.ceil(n * i / points)) for i in range(1, points + 1)})
    for k in steps:
        prefix = rated[:k]
        seated = {name for game, _ in prefix for name in game.seats}
        ratings = fit(rating_results(prefix), anchor=anchor if anchor in seated else None,
                      anchor_rating=anchor_rating)
        for name in ratings.players:
            series.setdefault(name, []).append((k, ratings.elo[name], ratings.ci95[name]))
    return series


def _sprt_settings(config: Mapping[str, Any]) -> tuple[Sprt, str, str, bool] | None:
    s = config.get("sprt")
    if config.get("format") != "sprt" or not isinstance(s, Mapping):
        return None
    test = Sprt(float(s["elo0"]), float(s["elo1"]), float(s.get("alpha", 0.05)),
                float(s.get("beta", 0.05)))
    return test, str(s["candidate"]), str(s["baseline"]), bool(config.get("duplicate", True))


def llr_series(rows: Sequence[GameRow], test: Sprt, candidate: str, baseline: str,
               duplicate: bool) -> tuple[list[tuple[int, float]], Pentanomial | Trinomial]:
    """The LLR after each complete duplicate pair (or each game, without duplicates), in
    the order they were stored, and the final counts (which ``summary.json`` reports)."""
    points: list[tuple[int, float]] = []
    groups: dict[str, dict[int, float]] = {}
    pairs = Pentanomial.from_pair_scores([])
    games = Trinomial.from_scores([])
    for game, places in rated_games(rows):
        s = head_to_head_score(game, places, candidate, baseline)
        if s is None:
            continue
        if duplicate:
            tables = groups.setdefault(game.group, {})
            tables[game.table] = s
            if set(tables) != {0, 1}:
                continue
            pairs = pairs + Pentanomial.from_pair_scores([tables[0] + tables[1]])
            points.append((len(points) + 1, test.llr(pairs)))
        else:
            games = games + Trinomial.from_scores([s])
            points.append((len(points) + 1, test.llr(games)))
    return points, (pairs if duplicate else games)


def _game_summary(row: GameRow) -> GameSummary:
    finished = bool(row.ranking) and all(p > 0 for p in row.ranking)
    winners = (tuple(sorted({row.seats[s] for s, p in enumerate(row.ranking) if p == 1}))
               if finished and row.termination != "interrupted" else ())
    return GameSummary(ref=f"{row.tournament_id}/{row.game_key}", key=row.game_key,
                       seats=tuple(row.seats), termination=row.termination,
                       scores=tuple(row.scores), winners=winners, hands=row.hands,
                       faults=len(row.faults), duration_s=row.duration_s, record=row.record)


def _distinct(values: Sequence[str]) -> str:
    return "; ".join(dict.fromkeys(values)) or "-"


def load_report(store: ResultsStore, tournament_id: str, *, anchor: str | None = None,
                anchor_rating: float = 0.0) -> ReportData:
    """Read one tournament from ``store`` and compute what its report shows. The
    ``summary`` is built exactly as ``summary.json`` is, so their numbers agree."""
    from harness.tournament.replay import describe_rules

    if tournament_id not in store.tournament_ids():
        raise HarnessError(f"no tournament {tournament_id!r} in {store.path}; it has: "
                           f"{', '.join(store.tournament_ids()) or 'none'}")
    config = store.tournament_config(tournament_id)
    rows = list(store.games(tournament_id))
    ratings = fit_ratings(rows, anchor=anchor, anchor_rating=anchor_rating)
    stats = compute_stats(rows)
    settings = _sprt_settings(config)
    llr: list[tuple[int, float]] = []
    test: Sprt | None = None
    counts: Pentanomial | Trinomial | None = None
    unit = "pairs"
    if settings is not None:
        test, candidate, baseline, duplicate = settings
        llr, counts = llr_series(rows, test, candidate, baseline, duplicate)
        unit = "pairs" if duplicate else "games"
    summary = summary_json(tournament_id, rows, ratings, stats, sprt=test, sprt_counts=counts)
    rules_text = [
        f"Rules: {_distinct([describe_rules(g.record.get('rules') or {}) for g in rows])}",
        f"Time control: {_distinct([str(g.record.get('time_control', '?')) for g in rows])}",
        f"Fault policy: {_distinct([str(g.record.get('fault_policy', '?')) for g in rows])}",
    ]
    return ReportData(
        title=str(config.get("name") or tournament_id),
        summary=summary,
        rules_text=rules_text,
        games=[_game_summary(r) for r in rows],
        convergence=convergence(rows, anchor=anchor, anchor_rating=anchor_rating),
        llr=llr,
        llr_unit=unit,
    )
