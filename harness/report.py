"""Tables and machine-readable output for a tournament.

Every ``render_*`` function returns a string and takes ``fmt``: ``"text"`` (tabulate's
``"simple"`` tables, underlined headings) or ``"markdown"`` (``"github"`` tables, ``#``
headings). :func:`summary_json` gives the same content as JSON-serialisable data (no
infinities or NaNs: those become ``null``), and :func:`write_outputs` writes
``report.md``, ``summary.json`` and ``games.jsonl`` for one tournament of a store.

``ratings`` may be ``None`` everywhere (nothing rated yet); the standings then say so.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tabulate import tabulate

from harness.ratings import Ratings
from harness.sprt import Pentanomial, Sprt, SprtDecision, SprtStatus, Trinomial
from harness.store import GameRow, ResultsStore
from harness.tournament.replay import describe_rules
from harness.tournament.stats import BotStats, compute_stats, fault_counts, head_to_head

__all__ = [
    "FORMATS",
    "OutputPaths",
    "render_faults",
    "render_head_to_head",
    "render_report",
    "render_sprt",
    "render_standings",
    "render_stats",
    "standings_rows",
    "summary_json",
    "write_outputs",
]

FORMATS: Mapping[str, str] = {"text": "simple", "markdown": "github"}
"""``fmt`` -> tabulate table format."""

Counts = Pentanomial | Trinomial

STATS_LEGEND = (
    "Hands: finished hands, throw-ins included, once per team the bot held a seat in. "
    "Makes: hands in which one of its seats chose trump; Made %: of those, the share its "
    "side took 3 or more tricks. Got euchred: its makes that failed. Euchred them: hands "
    "its team defended and the makers failed (lone defences included). Marches: its "
    "team made trump and took all 5. Alone won: successful lone hands as (or as partner "
    "of) the maker / attempts; Lone def. won: the same for defending alone."
)

_DECISIONS = {
    SprtDecision.CONTINUE: "continue (no decision yet)",
    SprtDecision.ACCEPT_H0: "accept H0 (not stronger by elo1)",
    SprtDecision.ACCEPT_H1: "accept H1 (stronger)",
}


# --------------------------------------------------------------------------- helpers


def _tablefmt(fmt: str) -> str:
    try:
        return FORMATS[fmt]
    except KeyError:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}; got {fmt!r}") from None


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]], fmt: str,
           left: Collection[int] = (0,)) -> str:
    """A table of preformatted cells; the columns in ``left`` are left-aligned, the
    others (numbers) right-aligned."""
    align = ["left" if i in left else "right" for i in range(len(headers))]
    return tabulate([list(r) for r in rows], headers=list(headers), tablefmt=_tablefmt(fmt),
                    colalign=align, disable_numparse=True)


def _heading(title: str, fmt: str, level: int = 2) -> str:
    if _tablefmt(fmt) == FORMATS["markdown"]:
        return f"{'#' * level} {title}"
    return f"{title}\n{('=' if level == 1 else '-') * len(title)}"


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _pct(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100.0 * x:.1f}%"


def _signed(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def _sprt_status(sprt: Sprt | None, counts: Counts | None) -> SprtStatus | None:
    if (sprt is None) != (counts is None):
        raise ValueError("give both sprt and sprt_counts, or neither")
    return None if sprt is None or counts is None else sprt.status(counts)


# --------------------------------------------------------------------------- standings


def standings_rows(ratings: Ratings, stats: Mapping[str, BotStats]) -> list[dict[str, Any]]:
    """One row per rated player, best first: ``rank``, ``name``, ``elo`` and ``ci95``
    (rounded to whole Elo), ``games`` (games played, from ``stats`` when it has the
    player, else the rating weight), ``score_pct`` (the rating model's score, 0-100, one
    decimal) and ``los_next_pct`` (likelihood of superiority over the next player down,
    0-100; ``None`` for the last)."""
    players = ratings.players
    rows = []
    for i, name in enumerate(players):
        below = players[i + 1] if i + 1 < len(players) else None
        rows.append({
            "rank": i + 1,
            "name": name,
            "elo": round(ratings.elo[name]),
            "ci95": round(ratings.ci95[name]),
            "games": stats[name].games if name in stats else round(ratings.games[name]),
            "score_pct": round(100.0 * ratings.score[name], 1),
            "los_next_pct": None if below is None else round(100.0 * ratings.los(name, below), 1),
        })
    return rows


def render_standings(ratings: Ratings | None, stats: Mapping[str, BotStats],
                     fmt: str = "text") -> str:
    """The rating list: rank, bot, Elo, ±95%, games, score and LOS over the next one."""
    if ratings is None:
        _tablefmt(fmt)
        return "No rated games yet."
    rows = [
        (r["rank"], r["name"], f"{r['elo']:+d}", f"±{r['ci95']}", r["games"],
         f"{r['score_pct']:.1f}%", "" if r["los_next_pct"] is None else f"{r['los_next_pct']:.1f}%")
        for r in standings_rows(ratings, stats)
    ]
    return _table(("#", "Bot", "Elo", "±95%", "Games", "Score", "LOS next"), rows, fmt,
                  left=(1,))


def render_los(ratings: Ratings | None, fmt: str = "text") -> str:
    """The likelihood-of-superiority matrix: the chance that the row's true rating is
    above the column's, from the fit's covariance."""
    if ratings is None or len(ratings.players) < 2:
        _tablefmt(fmt)
        return "Not enough rated bots."
    names = list(ratings.players)
    matrix = ratings.los_matrix()
    rows = [(a, *("-" if a == b else f"{100.0 * matrix[a][b]:.1f}%" for b in names))
            for a in names]
    return _table(("", *names), rows, fmt, left=(0,))


# --------------------------------------------------------------------------- head-to-head


def render_head_to_head(games: Iterable[GameRow], names: Sequence[str],
                        fmt: str = "text") -> str:
    """A matrix whose cell (row, column) is the row's score against the column, with the
    number of games in brackets (see :func:`~harness.tournament.stats.head_to_head`)."""
    h2h = head_to_head(games)
    rows = []
    for a in names:
        cells: list[str] = []
        for b in names:
            cell = h2h.get(a, {}).get(b)
            if a == b:
                cells.append("-")
            elif cell is None or cell.games == 0:
                cells.append("")
            else:
                cells.append(f"{_pct(cell.score)} ({cell.games})")
        rows.append((a, *cells))
    return _table(("", *names), rows, fmt)


# --------------------------------------------------------------------------- statistics


def render_stats(stats: Mapping[str, BotStats], fmt: str = "text") -> str:
    """Euchre statistics per bot (see :mod:`harness.tournament.stats` for the counting)."""
    rows = [
        (s.name, s.games, s.wins, s.hands, f"{s.points_per_hand:.3f}", s.makes,
         _pct(s.make_rate if s.makes else None), s.euchres_suffered, s.euchres_inflicted,
         s.marches, f"{s.alone_successes}/{s.alone_attempts}",
         f"{s.lone_defence_successes}/{s.lone_defence_attempts}")
        for s in stats.values()
    ]
    headers = ("Bot", "Games", "Wins", "Hands", "Pts/hand", "Makes", "Made %", "Got euchred",
               "Euchred them", "Marches", "Alone won", "Lone def. won")
    return _table(headers, rows, fmt)


def render_faults(stats: Mapping[str, BotStats], fmt: str = "text") -> str:
    """Faults per bot (crashes include disconnects), or a line saying there were none."""
    if not any(s.faults or s.forfeits for s in stats.values()):
        _tablefmt(fmt)
        return "No faults."
    rows = [
        (s.name, s.timeouts, s.illegal_actions, s.protocol_violations, s.crashes,
         s.startup_failures, s.forfeits)
        for s in stats.values()
    ]
    headers = ("Bot", "Timeouts", "Illegal", "Protocol", "Crashes", "Start-up", "Forfeits")
    return _table(headers, rows, fmt)


# --------------------------------------------------------------------------- SPRT


def _counts_text(counts: Counts) -> tuple[str, str]:
    values = ", ".join(f"{c:g}" for c in counts.counts)
    if isinstance(counts, Pentanomial):
        return (f"pairs (pentanomial 0..2): {values}",
                f"{counts.n:g} pairs, {counts.games:g} games")
    return f"games (loss, draw, win): {values}", f"{counts.games:g} games"


def render_sprt(status: SprtStatus, counts: Counts, fmt: str = "text", *,
                test: Sprt | None = None) -> str:
    """The SPRT state: hypotheses (if ``test`` is given), counts, score, Elo with its 95%
    interval and LOS from the counts, the LLR against its bounds, and the decision."""
    tally, size = _counts_text(counts)
    rows: list[tuple[str, str]] = []
    if test is not None:
        rows.append(("hypotheses", f"H0: Elo {test.elo0:g}, H1: Elo {test.elo1:g} "
                                   f"(alpha {test.alpha:g}, beta {test.beta:g})"))
    rows += [
        ("played", size),
        ("outcomes", tally),
        ("score", _pct(counts.score())),
        ("Elo", f"{_signed(counts.elo())} ± {counts.elo_ci95():.1f}"),
        ("LOS", _pct(counts.los())),
        ("LLR", f"{status.llr:.3f} (bounds {status.lower:.3f}, {status.upper:.3f})"),
        ("decision", _DECISIONS[status.decision]),
    ]
    return _table(("", ""), rows, fmt, left=(0, 1))


# --------------------------------------------------------------------------- report


def _distinct(values: Iterable[str]) -> str:
    found = list(dict.fromkeys(values))
    return "; ".join(found) if found else "-"


def _rules_lines(games: Sequence[GameRow]) -> list[str]:
    terminations = Counter(g.termination for g in games)
    played = ", ".join(f"{n} {kind}" for kind, n in sorted(terminations.items()))
    return [
        f"Rules: {_distinct(describe_rules(g.record.get('rules') or {}) for g in games)}",
        f"Time control: {_distinct(str(g.record.get('time_control', '?')) for g in games)}",
        f"Fault policy: {_distinct(str(g.record.get('fault_policy', '?')) for g in games)}",
        f"Games: {len(games)}" + (f" ({played})" if played else ""),
    ]


def render_report(title: str, games: Sequence[GameRow], ratings: Ratings | None,
                  stats: Mapping[str, BotStats], fmt: str = "markdown", *,
                  sprt: Sprt | None = None, sprt_counts: Counts | None = None) -> str:
    """The full report: title, rules summary, standings, head-to-head, statistics,
    faults, and the SPRT state when ``sprt`` and ``sprt_counts`` are given."""
    status = _sprt_status(sprt, sprt_counts)
    bullet = "- " if _tablefmt(fmt) == FORMATS["markdown"] else ""
    names = list(ratings.players) if ratings is not None else list(stats)
    names += [n for n in stats if n not in names]
    parts = [
        _heading(title, fmt, 1),
        "\n".join(bullet + line for line in _rules_lines(games)),
        _heading("Standings", fmt), render_standings(ratings, stats, fmt),
        _heading("Likelihood of superiority (row above column)", fmt),
        render_los(ratings, fmt),
        _heading("Head to head (row's score against column, games)", fmt),
        render_head_to_head(games, names, fmt),
        _heading("Statistics", fmt), render_stats(stats, fmt), STATS_LEGEND,
        _heading("Faults", fmt), render_faults(stats, fmt),
    ]
    if status is not None and sprt_counts is not None:
        parts += [_heading("SPRT", fmt), render_sprt(status, sprt_counts, fmt, test=sprt)]
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- JSON


def _ratings_json(ratings: Ratings) -> dict[str, Any]:
    return {
        "anchor": ratings.anchor,
        "prior_games": ratings.prior_games,
        "players": [
            {"name": name, "elo": ratings.elo[name], "ci95": ratings.ci95[name],
             "lower": ratings.interval(name)[0], "upper": ratings.interval(name)[1],
             "games": ratings.games[name], "score": ratings.score[name]}
            for name in ratings.players
        ],
        "los": ratings.los_matrix(),
    }


def _sprt_json(test: Sprt, status: SprtStatus, counts: Counts) -> dict[str, Any]:
    return {
        "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta,
        "kind": "pentanomial" if isinstance(counts, Pentanomial) else "trinomial",
        "counts": list(counts.counts), "games": counts.games,
        "score": counts.score(), "elo": _finite(counts.elo()),
        "elo_ci95": _finite(counts.elo_ci95()), "los": counts.los(),
        "llr": status.llr, "lower": status.lower, "upper": status.upper,
        "decision": status.decision.value,
    }


def summary_json(tournament_id: str, games: Sequence[GameRow], ratings: Ratings | None,
                 stats: Mapping[str, BotStats], *, sprt: Sprt | None = None,
                 sprt_counts: Counts | None = None) -> dict[str, Any]:
    """Everything in the report as JSON-serialisable data: ``tournament_id``, ``games``
    (total and per termination), ``rules`` (the distinct rule sets), ``ratings``
    (players with Elo, interval, games and score; the LOS matrix; or ``None``),
    ``standings``, ``head_to_head`` (``[a][b]`` = points, games, score), ``stats`` (per
    bot, counts and rates), ``faults`` (``{bot: {kind: count}}``) and ``sprt``."""
    status = _sprt_status(sprt, sprt_counts)
    rules: list[dict[str, Any]] = []
    for g in games:
        r = dict(g.record.get("rules") or {})
        if r not in rules:
            rules.append(r)
    return {
        "tournament_id": tournament_id,
        "games": {"total": len(games),
                  "by_termination": dict(sorted(Counter(g.termination for g in games).items()))},
        "rules": rules,
        "ratings": None if ratings is None else _ratings_json(ratings),
        "standings": [] if ratings is None else standings_rows(ratings, stats),
        "head_to_head": {
            a: {b: {"points": c.points, "games": c.games, "score": c.score}
                for b, c in row.items()}
            for a, row in head_to_head(games).items()
        },
        "stats": {name: s.to_dict() for name, s in stats.items()},
        "faults": fault_counts(games),
        "sprt": (None if status is None or sprt is None or sprt_counts is None
                 else _sprt_json(sprt, status, sprt_counts)),
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
