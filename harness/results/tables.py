"""The report's tables, as text or Markdown.

Every ``render_*`` function returns a string and takes ``fmt``: ``"text"`` (tabulate's
``"simple"`` tables, underlined headings) or ``"markdown"`` (``"github"`` tables, ``#``
headings). :mod:`harness.results.summary` gives the same content as JSON and writes the
output files.

``ratings`` may be ``None`` everywhere (nothing rated yet); the standings then say so.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from tabulate import tabulate

from harness.results.elo import Ratings
from harness.results.game_text import describe_rules
from harness.results.head_to_head import duel_counts, head_to_head
from harness.results.rating import rating_text, sweep_of
from harness.results.sprt import Pentanomial, Sprt, SprtDecision, SprtStatus, Trinomial
from harness.results.stats import BotStats, fault_counts
from harness.storage.results import GameRow

__all__ = [
    "BRIEF_WIDTH",
    "FORMATS",
    "render_brief",
    "render_duels",
    "render_faults",
    "render_head_to_head",
    "render_los",
    "render_report",
    "render_sprt",
    "render_standings",
    "render_stats",
    "rule_sets",
    "sprt_status",
    "standings_rows",
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


def _pct(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{100.0 * x:.1f}%"


def _signed(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def sprt_status(sprt: Sprt | None, counts: Counts | None) -> SprtStatus | None:
    """The test's status on the counts; None when neither is given."""
    if (sprt is None) != (counts is None):
        raise ValueError("give both sprt and sprt_counts, or neither")
    return None if sprt is None or counts is None else sprt.status(counts)


# --------------------------------------------------------------------------- standings


def standings_rows(ratings: Ratings, stats: Mapping[str, BotStats]) -> list[dict[str, Any]]:
    """One row per rated player, best first: ``rank``, ``name``, ``elo`` and ``ci95``
    (rounded to whole Elo), ``games`` (games played, from ``stats`` when it has the
    player, else the rating weight), ``score_pct`` (the share of the points its sides
    scored, 0-100, one decimal), ``los_next_pct`` (likelihood of superiority over the
    next player down, 0-100; ``None`` for the last), ``sweep`` (``"all_lost"``,
    ``"all_won"`` or ``None``) and ``bound``: for a sweep, ``elo`` and ``ci95`` are
    ``None`` and ``bound`` is the supported end of its 95% interval (see
    :func:`~harness.results.rating.sweep_of`); otherwise ``bound`` is ``None``."""
    players = ratings.players
    rows = []
    for i, name in enumerate(players):
        below = players[i + 1] if i + 1 < len(players) else None
        sweep = sweep_of(ratings, name)
        rows.append({
            "rank": i + 1,
            "name": name,
            "elo": None if sweep else round(ratings.elo[name]),
            "ci95": None if sweep else round(ratings.ci95[name]),
            "games": stats[name].games if name in stats else round(ratings.games[name]),
            "score_pct": round(100.0 * ratings.score[name], 1),
            "los_next_pct": None if below is None else round(100.0 * ratings.los(name, below), 1),
            "sweep": None if sweep is None else sweep[0].value,
            "bound": None if sweep is None or sweep[1] is None else round(sweep[1]),
        })
    return rows


def _elo_cells(row: Mapping[str, Any], anchor: str | None) -> tuple[str, str]:
    if row["sweep"] is not None or row["name"] == anchor:
        return rating_text(row["elo"], sweep=row["sweep"], bound=row["bound"],
                           anchor=row["name"] == anchor, games=row["games"]), "-"
    return rating_text(row["elo"]), f"±{row['ci95']}"


def render_standings(ratings: Ratings | None, stats: Mapping[str, BotStats],
                     fmt: str = "text") -> str:
    """The rating list: rank, bot, Elo, ±95%, games, score and LOS over the next one. A
    bot that lost (or won) every game shows the bound of its rating instead, and the
    anchor its fixed rating marked ``(anchor)``."""
    if ratings is None:
        _tablefmt(fmt)
        return "No rated games yet."
    rows = [
        (r["rank"], r["name"], *_elo_cells(r, ratings.anchor), r["games"], f"{r['score_pct']:.1f}%",
         "" if r["los_next_pct"] is None else f"{r['los_next_pct']:.1f}%")
        for r in standings_rows(ratings, stats)
    ]
    return _table(("#", "Bot", "Elo", "±95%", "Games", "Score", "LOS next"), rows, fmt,
                  left=(1, 2))


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
    number of games in brackets (see :func:`~harness.results.head_to_head.head_to_head`)."""
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


def _duel_cell(counts: Counts) -> str:
    unit = "pair" if isinstance(counts, Pentanomial) else "game"
    units = f"{counts.n:g} {unit}{'' if counts.n == 1 else 's'}"
    elo, half = counts.elo(), counts.elo_ci95()
    if not math.isfinite(elo):  # every unit won (or lost): no finite estimate
        return f"all {unit}s {'won' if elo > 0 else 'lost'} ({units})"
    spread = f" ± {half:.0f}" if math.isfinite(half) else ""
    return f"{_signed(elo, 0)}{spread} ({units})"


def render_duels(games: Iterable[GameRow], names: Sequence[str], fmt: str = "text") -> str:
    """A matrix whose cell (row, column) is the row's Elo against the column with its
    95% interval, from their duels (see
    :func:`~harness.results.head_to_head.duel_counts`): over complete duplicate pairs
    (pentanomial) when there are any, else over games."""
    duels = duel_counts(games)
    if not duels:
        _tablefmt(fmt)
        return "No duels (games of one bot against another) yet."
    rows = []
    for a in names:
        cells = ["-" if a == b else _duel_cell(duels[a][b]) if b in duels.get(a, {}) else ""
                 for b in names]
        rows.append((a, *cells))
    return _table(("", *names), rows, fmt)


# --------------------------------------------------------------------------- statistics


def render_stats(stats: Mapping[str, BotStats], fmt: str = "text") -> str:
    """Euchre statistics per bot (see :mod:`harness.results.stats` for the counting)."""
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
        ("Elo", _sprt_elo(counts)),
        ("LOS", _pct(counts.los())),
        ("LLR", f"{status.llr:.3f} (bounds {status.lower:.3f}, {status.upper:.3f})"),
        ("decision", _DECISIONS[status.decision]),
    ]
    return _table(("measure", "value"), rows, fmt, left=(0, 1))


def _sprt_elo(counts: Counts) -> str:
    elo = counts.elo()
    if not math.isfinite(elo):  # every pair (or game) went one way: no finite estimate
        unit = "pair" if isinstance(counts, Pentanomial) else "game"
        return f"none yet: all {unit}s {'won' if elo > 0 else 'lost'}"
    return f"{_signed(elo)} ± {counts.elo_ci95():.1f}"


# --------------------------------------------------------------------------- report


def rule_sets(games: Iterable[GameRow]) -> list[str]:
    """The distinct rule sets of ``games``, each described in one line, in order."""
    return list(dict.fromkeys(describe_rules(g.record.get("rules") or {}) for g in games))


def _distinct(values: Iterable[str]) -> str:
    found = list(dict.fromkeys(values))
    return "; ".join(found) if found else "-"


def _rules_lines(games: Sequence[GameRow]) -> list[str]:
    terminations = Counter(g.termination.value for g in games)
    played = ", ".join(f"{n} {kind}" for kind, n in sorted(terminations.items()))
    return [
        f"Rules: {_distinct(rule_sets(games))}",
        f"Time control: {_distinct(str(g.record.get('time_control', '?')) for g in games)}",
        f"Fault policy: {_distinct(str(g.record.get('fault_policy', '?')) for g in games)}",
        f"Games: {len(games)}" + (f" ({played})" if played else ""),
    ]


def render_report(title: str, games: Sequence[GameRow], ratings: Ratings | None,
                  stats: Mapping[str, BotStats], fmt: str = "markdown", *,
                  sprt: Sprt | None = None, sprt_counts: Counts | None = None) -> str:
    """The full report: title, rules summary, standings, head-to-head, statistics,
    faults, and the SPRT state when ``sprt`` and ``sprt_counts`` are given."""
    status = sprt_status(sprt, sprt_counts)
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
        _heading("Head-to-head Elo (row against column, 95% interval; duplicate pairs)", fmt),
        render_duels(games, names, fmt),
        _heading("Statistics", fmt), render_stats(stats, fmt), STATS_LEGEND,
        _heading("Faults", fmt), render_faults(stats, fmt),
    ]
    if status is not None and sprt_counts is not None:
        parts += [_heading("SPRT", fmt), render_sprt(status, sprt_counts, fmt, test=sprt)]
    return "\n\n".join(parts) + "\n"


BRIEF_WIDTH = 100
"""The brief report fits a terminal this wide (the full one goes to report.md)."""


def render_brief(title: str, games: Sequence[GameRow], ratings: Ratings | None,
                 stats: Mapping[str, BotStats], *, sprt: Sprt | None = None,
                 sprt_counts: Counts | None = None) -> str:
    """What a run prints: the title, the rules and a few key figures (games, faults)
    wrapped to :data:`BRIEF_WIDTH` columns, the standings, and the SPRT state when
    ``sprt`` and ``sprt_counts`` are given. The wide tables are in the full report."""
    fault_text = "; ".join(
        f"{name} " + ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        for name, kinds in fault_counts(stats).items()) or "none"
    lines = [*_rules_lines(games), f"Faults: {fault_text}"]
    parts = [
        _heading(title, "text", 1),
        "\n".join(textwrap.fill(line, BRIEF_WIDTH, subsequent_indent="  ") for line in lines),
        render_standings(ratings, stats, "text"),
    ]
    status = sprt_status(sprt, sprt_counts)
    if status is not None and sprt_counts is not None:
        parts.append(render_sprt(status, sprt_counts, "text", test=sprt))
    return "\n\n".join(parts) + "\n"
