"""From stored games to ratings and reports: the glue between the store, the schedule's
rating rules, the Elo fit and the report tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError, HarnessError
from harness.ratings import Ratings, fit
from harness.report import render_report, write_outputs
from harness.sprt import Pentanomial, Sprt, Trinomial
from harness.store import GameRow, ResultsStore
from harness.tournament.config import TournamentConfig
from harness.tournament.runner import store_path
from harness.tournament.schedule import (
    ScheduledGame,
    game_counts,
    pair_counts,
    rating_results,
)
from harness.tournament.stats import compute_stats


def scheduled(row: GameRow) -> ScheduledGame:
    """The scheduled game a stored row was played for (its rating sides included)."""
    t = row.record.get("tournament") or {}
    sides = t.get("sides")
    if sides is None:  # a game stored by something else: one side per seat
        sides = [[name] for name in row.seats]
    return ScheduledGame(key=row.game_key, seats=tuple(row.seats), seed=row.seed,
                         group=str(t.get("group", row.game_key)), table=int(t.get("table", 0)),
                         sides=tuple(tuple(s) for s in sides))


def rated_games(rows: Iterable[GameRow]) -> list[tuple[ScheduledGame, Sequence[int]]]:
    """Finished games (normal or forfeit) with their places; interrupted ones excluded."""
    return [(scheduled(r), r.ranking) for r in rows
            if r.termination != "interrupted" and all(p > 0 for p in r.ranking)]


def fit_ratings(rows: Iterable[GameRow], *, anchor: str | None = None,
                anchor_rating: float = 0.0) -> Ratings | None:
    results = rating_results(rated_games(rows))
    if not results:
        return None
    try:
        return fit(results, anchor=anchor, anchor_rating=anchor_rating)
    except ConfigError as e:
        if e.option == "anchor":
            raise HarnessError(f"--anchor: {e.message}") from e
        raise


def standings(store: ResultsStore, tournament_id: str) -> list[dict[str, Any]]:
    rows = list(store.games(tournament_id))
    ratings = fit_ratings(rows)
    if ratings is None:
        return []
    return [{"name": n, "elo": ratings.elo[n], "ci95": ratings.ci95[n],
             "games": ratings.games[n], "score": ratings.score[n]} for n in ratings.players]


def _sprt_of(config: TournamentConfig, rows: Sequence[GameRow]
             ) -> tuple[Sprt | None, Pentanomial | Trinomial | None]:
    s = config.sprt
    if config.format != "sprt" or s is None:
        return None, None
    test = Sprt(s.elo0, s.elo1, s.alpha, s.beta)
    games = rated_games(rows)
    counts: Pentanomial | Trinomial
    if config.duplicate:
        counts = pair_counts(s.candidate, s.baseline, games)
    else:
        counts = game_counts(s.candidate, s.baseline, games)
    return test, counts


def tournament_report(config: TournamentConfig, *, markdown: bool = False) -> str:
    """Write report.md, summary.json and games.jsonl for a tournament; return the report."""
    path = store_path(Path(config.output))
    with ResultsStore(path) as store:
        rows = list(store.games(config.id))
        ratings = fit_ratings(rows, anchor=config.anchor, anchor_rating=config.anchor_rating)
        stats = compute_stats(rows)
        sprt, counts = _sprt_of(config, rows)
        write_outputs(Path(config.output), store, config.id, ratings, stats,
                      title=config.name, sprt=sprt, sprt_counts=counts)
        return render_report(config.name, rows, ratings, stats,
                             "markdown" if markdown else "text", sprt=sprt, sprt_counts=counts)


def store_report(store: ResultsStore, tournament_id: str | None, *, anchor: str | None = None,
                 anchor_rating: float = 0.0, markdown: bool = False) -> str:
    """Tables recomputed from the store alone (every tournament in it by default)."""
    ids = [tournament_id] if tournament_id else store.tournament_ids()
    if tournament_id and tournament_id not in store.tournament_ids():
        raise HarnessError(f"no tournament {tournament_id!r} in {store.path}; it has: "
                           f"{', '.join(store.tournament_ids()) or 'none'}")
    rows = [r for tid in ids for r in store.games(tid)]
    ratings = fit_ratings(rows, anchor=anchor, anchor_rating=anchor_rating)
    stats = compute_stats(rows)
    title = tournament_id or ", ".join(ids) or "results"
    return render_report(title, rows, ratings, stats, "markdown" if markdown else "text")
