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
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.referee.outcome import Termination
from harness.results.game_text import describe_rules
from harness.results.rating import Sweep, fit_ratings, rating_history
from harness.results.sprt import Pentanomial, Sprt, Trinomial
from harness.results.stats import compute_stats
from harness.results.summary import SprtSetup, summary_json
from harness.storage.results import GameRow, ResultsStore

__all__ = ["GameSummary", "ReportData", "Sweep", "game_summary", "load_report"]



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


def convergence(rows: Sequence[GameRow], *, points: int, anchor: str | None = None,
                anchor_rating: float = 0.0) -> dict[str, list[tuple[int, float, float]]]:
    """Each player's ``(games rated so far, elo, ci95)`` at up to ``points`` checkpoints
    (the last one is the fit over every game); see :func:`convergence_series`."""
    return convergence_series(rating_history(rows, points=points, anchor=anchor,
                                             anchor_rating=anchor_rating))


def convergence_series(history: Sequence[Mapping[str, Any]]
                       ) -> dict[str, list[tuple[int, float, float]]]:
    """The series of :func:`~harness.results.rating.rating_history` (``summary.json``'s
    ``rating_history``) per player. A checkpoint at which a player's rating is only a
    bound (it has won or lost everything so far) is left out of its series."""
    series: dict[str, list[tuple[int, float, float]]] = {}
    for point in history:
        for player in point["players"]:
            if player.get("elo") is not None and player.get("ci95") is not None:
                series.setdefault(player["name"], []).append(
                    (int(point["games"]), float(player["elo"]), float(player["ci95"])))
    return series


def _sprt_settings(config: Mapping[str, Any]) -> SprtSetup | None:
    s = config.get("sprt")
    if config.get("format") != "sprt" or not isinstance(s, Mapping):
        return None
    test = Sprt(float(s["elo0"]), float(s["elo1"]), float(s.get("alpha", 0.05)),
                float(s.get("beta", 0.05)))
    return SprtSetup(test, str(s["candidate"]), str(s["baseline"]),
                     bool(config.get("duplicate", True)))


def llr_series(rows: Sequence[GameRow], test: Sprt, candidate: str, baseline: str,
               duplicate: bool) -> tuple[list[tuple[int, float]], Pentanomial | Trinomial]:
    """The LLR after each complete duplicate pair (or each game, without duplicates), in
    the order they were stored, and the final counts (which ``summary.json`` reports)."""
    return SprtSetup(test, candidate, baseline, duplicate).llr_series(rows)


def game_summary(row: GameRow) -> GameSummary:
    """A stored game as the game lists show it (the report's, the live page's)."""
    finished = bool(row.ranking) and all(p > 0 for p in row.ranking)
    winners = (tuple(sorted({row.seats[s] for s, p in enumerate(row.ranking) if p == 1}))
               if finished and row.termination is not Termination.INTERRUPTED else ())
    return GameSummary(ref=f"{row.tournament_id}/{row.game_key}", key=row.game_key,
                       seats=tuple(row.seats), termination=row.termination.value,
                       scores=tuple(row.scores), winners=winners, hands=row.hands,
                       faults=len(row.faults), duration_s=row.duration_s, record=row.record)


def _distinct(values: Sequence[str]) -> str:
    return "; ".join(dict.fromkeys(values)) or "-"


def load_report(store: ResultsStore, tournament_id: str, *, anchor: str | None = None,
                anchor_rating: float = 0.0) -> ReportData:
    """Read one tournament from ``store`` and compute what its report shows. The
    ``summary`` is built exactly as ``summary.json`` is, so their numbers agree."""
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
        test = settings.test
        llr, counts = settings.llr_series(rows)
        unit = "pairs" if settings.duplicate else "games"
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
        games=[game_summary(r) for r in rows],
        convergence=convergence_series(summary["rating_history"]),
        llr=llr,
        llr_unit=unit,
    )
