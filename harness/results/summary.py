"""``summary.json``, the output files, and the reports recomputed from a store.

:func:`summary_json` gives the report's content as JSON-serialisable data (no
infinities or NaNs: those become ``null``); its layout is published as a JSON Schema in
``docs/schemas/summary.schema.json`` (and a ``games.jsonl`` line in
``docs/schemas/game.schema.json``). :func:`write_outputs` writes ``report.md``,
``summary.json`` and ``games.jsonl`` for one tournament of a store.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from harness.errors import HarnessError
from harness.results.elo import Ratings
from harness.results.head_to_head import (
    duel_counts,
    game_counts,
    head_to_head,
    head_to_head_score,
    pair_counts,
)
from harness.results.rating import fit_ratings, player_json, rating_history, sweep_of
from harness.results.rows import rated_games
from harness.results.sprt import Pentanomial, Sprt, SprtStatus, Trinomial
from harness.results.stats import BotStats, compute_stats, fault_counts
from harness.results.tables import (
    render_brief,
    render_report,
    rule_sets,
    sprt_status,
    standings_rows,
)
from harness.storage.results import GameRow, ResultsStore

__all__ = [
    "OutputPaths",
    "SprtSetup",
    "report_tournament",
    "standings",
    "store_report",
    "summary_json",
    "write_outputs",
]

Counts = Pentanomial | Trinomial


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _ratings_json(ratings: Ratings) -> dict[str, Any]:
    return {
        "anchor": ratings.anchor,
        "prior_games": ratings.prior_games,
        "players": [player_json(ratings, name) for name in ratings.players],
        "los": ratings.los_matrix(),
    }


def _counts_json(counts: Counts) -> dict[str, Any]:
    return {
        "kind": "pentanomial" if isinstance(counts, Pentanomial) else "trinomial",
        "counts": list(counts.counts), "games": counts.games,
        "score": counts.score(), "elo": _finite(counts.elo()),
        "elo_ci95": _finite(counts.elo_ci95()), "los": counts.los(),
    }


def _sprt_json(test: Sprt, status: SprtStatus, counts: Counts) -> dict[str, Any]:
    return {
        "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta,
        **_counts_json(counts),
        "llr": status.llr, "lower": status.lower, "upper": status.upper,
        "decision": status.decision.value,
    }


def _head_to_head_json(games: Sequence[GameRow]) -> dict[str, dict[str, Any]]:
    duels = duel_counts(games)
    out: dict[str, dict[str, Any]] = {}
    for a, row in head_to_head(games).items():
        out[a] = {}
        for b, c in row.items():
            duel = duels.get(a, {}).get(b)
            out[a][b] = {"points": c.points, "games": c.games, "score": c.score,
                         "duels": None if duel is None else _counts_json(duel)}
    return out


def summary_json(tournament_id: str, games: Sequence[GameRow], ratings: Ratings | None,
                 stats: Mapping[str, BotStats], *, sprt: Sprt | None = None,
                 sprt_counts: Counts | None = None,
                 history: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Everything in the report as JSON-serialisable data: ``tournament_id``, ``games``
    (total and per termination), ``rules`` (the distinct rule sets), ``ratings``
    (players with Elo, interval, games, score and sweep; the LOS matrix; or ``None``),
    ``standings``, ``head_to_head`` (``[a][b]`` = points, games, score, and the duel
    statistics with Elo and interval), ``stats`` (per bot, counts and rates), ``faults``
    (``{bot: {kind: count}}``), ``sprt`` and ``rating_history`` (``history``, by default
    :func:`~harness.results.rating.rating_history` of ``games``)."""
    status = sprt_status(sprt, sprt_counts)
    rules: list[dict[str, Any]] = []
    for g in games:
        r = dict(g.record.get("rules") or {})
        if r not in rules:
            rules.append(r)
    anchor = None if ratings is None else ratings.anchor
    return {
        "tournament_id": tournament_id,
        "games": {"total": len(games),
                  "by_termination": dict(sorted(Counter(g.termination.value
                                                        for g in games).items()))},
        "rules": rules,
        "ratings": None if ratings is None else _ratings_json(ratings),
        "standings": [] if ratings is None else standings_rows(ratings, stats),
        "head_to_head": _head_to_head_json(games),
        "stats": {name: s.to_dict() for name, s in stats.items()},
        "faults": fault_counts(stats),
        "sprt": (None if status is None or sprt is None or sprt_counts is None
                 else _sprt_json(sprt, status, sprt_counts)),
        "rating_history": list(history if history is not None
                               else rating_history(games, anchor=anchor)),
    }


# --------------------------------------------------------------------------- files


class OutputPaths(NamedTuple):
    report: Path
    summary: Path
    games: Path


def _write_text(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8", newline="\n")
    os.replace(partial, path)


def write_outputs(out_dir: Path, store: ResultsStore, tournament_id: str,
                  ratings: Ratings | None, stats: Mapping[str, BotStats] | None = None, *,
                  title: str | None = None, sprt: Sprt | None = None,
                  sprt_counts: Counts | None = None) -> OutputPaths:
    """Write ``report.md``, ``summary.json`` and ``games.jsonl`` for one tournament into
    ``out_dir`` (created if needed; each file replaced atomically). ``stats`` defaults
    to :func:`compute_stats` over the tournament's stored games."""
    games = list(store.games(tournament_id))
    if stats is None:
        stats = compute_stats(games)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = OutputPaths(out_dir / "report.md", out_dir / "summary.json", out_dir / "games.jsonl")
    _write_text(paths.report, render_report(title or f"Tournament {tournament_id}", games,
                                            ratings, stats, "markdown", sprt=sprt,
                                            sprt_counts=sprt_counts))
    summary = summary_json(tournament_id, games, ratings, stats, sprt=sprt,
                           sprt_counts=sprt_counts)
    _write_text(paths.summary, json.dumps(summary, indent=2, allow_nan=False) + "\n")
    store.export_jsonl(paths.games, tournament_id)
    return paths


# --------------------------------------------------------------------------- from a store


@dataclass(frozen=True)
class SprtSetup:
    """An SPRT tournament's test and its two bots; ``duplicate`` counts pairs
    (pentanomial), otherwise games (trinomial)."""

    test: Sprt
    candidate: str
    baseline: str
    duplicate: bool

    def counts(self, rows: Sequence[GameRow]) -> Counts:
        games = rated_games(rows)
        if self.duplicate:
            return pair_counts(self.candidate, self.baseline, games)
        return game_counts(self.candidate, self.baseline, games)

    def llr_series(self, rows: Sequence[GameRow]) -> tuple[list[tuple[int, float]], Counts]:
        """The LLR after each complete duplicate pair (each game, without duplicates), in
        the order the games were stored, and the final counts (equal to :meth:`counts`)."""
        points: list[tuple[int, float]] = []
        groups: dict[str, dict[int, float]] = {}
        pairs = Pentanomial.from_pair_scores([])
        games = Trinomial.from_scores([])
        for game, places in rated_games(rows):
            s = head_to_head_score(game, places, self.candidate, self.baseline)
            if s is None:
                continue
            if self.duplicate:
                tables = groups.setdefault(game.group, {})
                tables[game.table] = s
                if set(tables) != {0, 1}:
                    continue
                pairs = pairs + Pentanomial.from_pair_scores([tables[0] + tables[1]])
                points.append((len(points) + 1, self.test.llr(pairs)))
            else:
                games = games + Trinomial.from_scores([s])
                points.append((len(points) + 1, self.test.llr(games)))
        return points, (pairs if self.duplicate else games)


def report_tournament(store: ResultsStore, tournament_id: str, out_dir: Path, *,
                      title: str, anchor: str | None = None, anchor_rating: float = 0.0,
                      sprt: SprtSetup | None = None, markdown: bool = False,
                      brief: bool = False) -> str:
    """Write report.md, summary.json and games.jsonl for a tournament into ``out_dir``;
    return the report as text (or Markdown; with ``brief``, the few lines a run prints,
    see :func:`~harness.results.tables.render_brief`)."""
    rows = list(store.games(tournament_id))
    ratings = fit_ratings(rows, anchor=anchor, anchor_rating=anchor_rating)
    stats = compute_stats(rows)
    test = None if sprt is None else sprt.test
    counts = None if sprt is None else sprt.counts(rows)
    write_outputs(out_dir, store, tournament_id, ratings, stats, title=title, sprt=test,
                  sprt_counts=counts)
    if brief:
        return render_brief(title, rows, ratings, stats, sprt=test, sprt_counts=counts)
    return render_report(title, rows, ratings, stats, "markdown" if markdown else "text",
                         sprt=test, sprt_counts=counts)


def standings(store: ResultsStore, tournament_id: str, *, anchor: str | None = None,
              anchor_rating: float = 0.0) -> list[dict[str, Any]]:
    """The live standings of a tournament, best first, as the report's: ``name``, ``elo``,
    ``ci95``, ``games`` and ``score`` per rated bot, and ``sweep`` (``"all_won"``,
    ``"all_lost"`` or None) with ``bound``: for a bot that won or lost every game the
    ``elo`` is no measurement, and ``bound`` is the end of its interval that its results
    support (see :func:`~harness.results.rating.sweep_of`); the anchor is never a sweep."""
    rows = list(store.games(tournament_id))
    ratings = fit_ratings(rows, anchor=anchor, anchor_rating=anchor_rating)
    if ratings is None:
        return []
    out = []
    for n in ratings.players:
        sweep = sweep_of(ratings, n)
        out.append({"name": n, "elo": ratings.elo[n], "ci95": ratings.ci95[n],
                    "games": ratings.games[n], "score": ratings.score[n],
                    "sweep": None if sweep is None else sweep[0].value,
                    "bound": None if sweep is None else sweep[1]})
    return out


def store_report(store: ResultsStore, tournament_id: str | None, *, anchor: str | None = None,
                 anchor_rating: float = 0.0, markdown: bool = False,
                 pool: bool = False) -> str:
    """Tables recomputed from the store alone: of one tournament; by default of every
    tournament in it, one report each; with ``pool``, one report over all of them, which
    requires that they were all played under the same rules. An anchor applies to the
    tournaments it played in."""
    known = store.tournament_ids()
    if tournament_id and tournament_id not in known:
        raise HarnessError(f"no tournament {tournament_id!r} in {store.path}; it has: "
                           f"{', '.join(known) or 'none'}")
    ids = [tournament_id] if tournament_id else known
    fmt = "markdown" if markdown else "text"
    games = {tid: list(store.games(tid)) for tid in ids}
    if pool and len(ids) > 1:
        rules = {tid: rule_sets(rows) for tid, rows in games.items() if rows}
        if len({rule for found in rules.values() for rule in found}) > 1:
            listed = "; ".join(f"{tid}: {' | '.join(found)}" for tid, found in rules.items())
            raise HarnessError("cannot pool tournaments played under different rules "
                               f"({listed}); rate them one at a time (without --pool)")
        games = {", ".join(ids): [r for rows in games.values() for r in rows]}
    if not games:
        return render_report("results", [], None, {}, fmt)
    played_in = {title for title, rows in games.items() if any(anchor in r.seats for r in rows)}
    if anchor is not None and len(games) > 1 and not played_in:
        raise HarnessError(f"--anchor: unknown player {anchor!r}")
    reports = []
    for title, rows in games.items():
        # With one table an unknown anchor is an error (from the fit); with several, the
        # anchor fixes the tables of the tournaments it played in.
        use = anchor if len(games) == 1 or title in played_in else None
        ratings = fit_ratings(rows, anchor=use, anchor_rating=anchor_rating)
        reports.append(render_report(title, rows, ratings, compute_stats(rows), fmt))
    return "\n".join(reports)
