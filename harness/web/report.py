"""``report.html``: a tournament's results as one self-contained page.

Standings with an interval plot, the likelihood-of-superiority heatmap, head-to-head,
Euchre statistics per bot, rating against games played, the SPRT's LLR against its
bounds (for an SPRT), faults, and every game with a link to its replay page (written
beside the report in ``replays/``). Every number comes from the same summary that
``summary.json`` holds (see :mod:`harness.web.data`); the charts are SVG drawn here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from harness.results.rating_text import rating_text
from harness.storage.results import ResultsStore
from harness.web import assets, svg
from harness.web.data import GameSummary, ReportData, load_report
from harness.web.replay import VIEWER_FILES, VIEWER_STAMP, replay_html

__all__ = ["REPLAY_DIR", "render_report_html", "replay_file_names", "write_report_html"]

REPLAY_DIR = "replays"
"""The folder, beside report.html, that holds one replay page per game."""


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100.0 * x:.1f}%"


def _cell(value: object, field: str = "", cls: str = "", style: str = "") -> str:
    attrs = (f' data-field="{escape(field)}"' if field else "")
    attrs += f' class="{cls}"' if cls else ""
    attrs += f' style="{style}"' if style else ""
    return f"<td{attrs}>{escape(str(value))}</td>"


def _table(headers: Sequence[str], rows: Iterable[str], table_id: str = "",
           left: Sequence[int] = (0,)) -> str:
    head = "".join(f'<th class="name">{escape(h)}</th>' if i in left else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(headers))
    ident = f' id="{table_id}"' if table_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _row(name: str, cells: str) -> str:
    return f'<tr data-bot="{escape(name)}"><td class="name">{escape(name)}</td>{cells}</tr>'


def _standings(summary: Mapping[str, Any]) -> str:
    ratings = summary.get("ratings")
    if not ratings:
        return "<p>No rated games yet.</p>"
    rows = [
        _row(r["name"], _cell(r["rank"], "rank") + _elo_cells(r, ratings.get("anchor"))
             + _cell(r["games"], "games")
             + _cell(f"{r['score_pct']:.1f}%", "score_pct")
             + _cell("" if r["los_next_pct"] is None else f"{r['los_next_pct']:.1f}%",
                     "los_next_pct"))
        for r in summary["standings"]
    ]
    table = _table(("Bot", "#", "Elo", "±95%", "Games", "Score", "LOS next"), rows, "standings")
    measured = [(p["name"], p["elo"], p["lower"], p["upper"]) for p in ratings["players"]
                if p["elo"] is not None]
    plot = svg.interval_plot(measured, label="Elo (95% interval)", width=500,
                             colours=_colours(summary))
    anchor = ratings.get("anchor")
    note = (f"Anchored: {escape(anchor)} is fixed at its rating." if anchor
            else "Ratings have mean 0.")
    return (f'<div class="charts"><div>{table}<p class="legend">{note} Maximum-likelihood '
            f'Elo with a prior of {ratings["prior_games"]:g} draws per bot.</p></div>'
            f'<div class="chart" id="interval-plot">{plot}</div></div>')


def _elo_cells(row: Mapping[str, Any], anchor: str | None) -> str:
    """The Elo and interval cells; a bot that won or lost every game shows the bound its
    results support instead of a number that would look measured (and no plot bar), and
    the anchor its fixed rating, marked."""
    if row["sweep"] is not None or row["name"] == anchor:
        text = rating_text(row["elo"], sweep=row["sweep"], bound=row["bound"],
                           anchor=row["name"] == anchor, games=row["games"])
        return _cell(text, "elo") + _cell("-", "ci95")
    return _cell(f"{row['elo']:+d}", "elo") + _cell(f"±{row['ci95']}", "ci95")


def _los(summary: Mapping[str, Any]) -> str:
    ratings = summary.get("ratings")
    if not ratings or len(ratings["players"]) < 2:
        return "<p>Not enough rated bots.</p>"
    names = [p["name"] for p in ratings["players"]]
    chart = svg.heatmap(names, ratings["los"], label="likelihood of superiority")
    return (f'<div class="chart" id="los-heatmap">{chart}</div><p class="legend">The chance '
            f'that the row bot is truly stronger than the column bot, from the fit\'s '
            f'covariance.</p>')


def _names(summary: Mapping[str, Any]) -> list[str]:
    names = [r["name"] for r in summary.get("standings") or []]
    return names + [n for n in summary["stats"] if n not in names]


def _colours(summary: Mapping[str, Any]) -> dict[str, str]:
    """One colour per bot, the same in every chart."""
    return {n: svg.PALETTE[i % len(svg.PALETTE)] for i, n in enumerate(_names(summary))}


def _head_to_head(summary: Mapping[str, Any]) -> str:
    h2h = summary["head_to_head"]
    names = _names(summary)
    rows = []
    for a in names:
        cells = []
        for b in names:
            c = h2h.get(a, {}).get(b)
            if a == b or c is None or not c["games"]:
                cells.append(_cell("-" if a == b else ""))
            else:
                cells.append(_cell(f"{_pct(c['score'])} ({c['games']})", f"h2h-{b}",
                                   style=f"background:{svg.heat_colour(c['score'])}"))
        rows.append(_row(a, "".join(cells)))
    return (_table(("", *names), rows, "head-to-head")
            + '<p class="legend">The row bot\'s score against the column bot (1 per game '
              'placed above, ½ per game placed level), with the number of games.</p>')


def _duel_text(duel: Mapping[str, Any]) -> tuple[str, str]:
    """A duel's Elo with its 95% interval and size ("+147 ± 126 (10 pairs)"), and its
    counts ("pairs by score 0, ½, 1, 1½, 2: 1, 2, 3, 2, 2")."""
    pairs = duel["kind"] == "pentanomial"
    unit = "pair" if pairs else "game"
    n = sum(duel["counts"])
    size = f"{n:g} {unit}{'' if n == 1 else 's'}"
    if duel["elo"] is None:
        elo = f"all {unit}s {'won' if duel['score'] >= 0.5 else 'lost'} ({size})"
    else:
        spread = "" if duel["elo_ci95"] is None else f" ± {duel['elo_ci95']:.0f}"
        elo = f"{round(duel['elo']) + 0:+d}{spread} ({size})"
    scores = "0, ½, 1, 1½, 2" if pairs else "loss, draw, win"
    counts = ", ".join(f"{c:g}" for c in duel["counts"])
    return elo, f"{unit}s by score {scores}: {counts}"


def _duels(summary: Mapping[str, Any]) -> str:
    """The row bot's Elo against the column bot with its 95% interval, from duplicate
    pairs when there are any (with the pentanomial counts), else from games."""
    h2h = summary["head_to_head"]
    names = _names(summary)
    rows = []
    for a in names:
        cells = []
        for b in names:
            duel = (h2h.get(a, {}).get(b) or {}).get("duels")
            if a == b or not duel:
                cells.append(_cell("-" if a == b else ""))
                continue
            elo, counts = _duel_text(duel)
            cells.append(f'<td class="duel-{escape(b)}">{escape(elo)}'
                         f'<br><small class="muted">{escape(counts)}</small></td>')
        rows.append(_row(a, "".join(cells)))
    return (_table(("", *names), rows, "duels")
            + '<p class="legend">The row bot\'s Elo against the column bot with its 95% '
              'interval, from duplicate pairs (a deal set played on both sides; a pair '
              'scores 0 to 2) when there are any, else from games; below, how many pairs '
              'scored each amount (the pentanomial counts).</p>')


def _stats(summary: Mapping[str, Any]) -> str:
    rows = []
    for name, s in summary["stats"].items():
        makes = s["makes"]
        rows.append(_row(name, "".join([
            _cell(s["games"], "games"), _cell(s["wins"], "wins"), _cell(s["hands"], "hands"),
            _cell(f"{s['points_per_hand']:.3f}", "points_per_hand"), _cell(makes, "makes"),
            _cell(_pct(s["make_rate"] if makes else None), "make_pct"),
            _cell(_pct(s["euchres_suffered"] / makes if makes else None), "euchred_pct"),
            _cell(s["euchres_inflicted"], "euchres_inflicted"), _cell(s["marches"], "marches"),
            _cell(f"{s['alone_successes']}/{s['alone_attempts']}", "alone"),
            _cell(f"{s['lone_defence_successes']}/{s['lone_defence_attempts']}",
                  "lone_defence"),
        ])))
    headers = ("Bot", "Games", "Wins", "Hands", "Pts/hand", "Makes", "Made %", "Euchred %",
               "Euchred them", "Marches", "Alone won", "Lone def. won")
    return (_table(headers, rows, "stats")
            + '<p class="legend">Made %: the share of its makes that its side won; Euchred %: '
              'the share that failed. Euchred them: hands its team defended and the makers '
              'failed. Marches: its team made trump and took all 5. Alone won: successful lone '
              'hands / attempts; Lone def. won: the same for defending alone. Points per hand '
              'count every finished hand, throw-ins included.</p>')


def _convergence(data: ReportData) -> str:
    if not data.convergence:
        return "<p>No rated games yet.</p>"
    order = [n for n in _names(data.summary) if n in data.convergence]
    order += [n for n in data.convergence if n not in order]
    series = {n: [(g, e) for g, e, _ in data.convergence[n]] for n in order}
    bands = {n: [(g, e - c, e + c) for g, e, c in data.convergence[n]] for n in order}
    chart = svg.line_chart(series, x_label="games rated", y_label="Elo", bands=bands,
                           colours=_colours(data.summary))
    return (f'<div class="chart" id="convergence">{chart}</div><p class="legend">Each bot\'s '
            f'rating fitted over the first games only, with its 95% interval shaded.</p>')


_DECISIONS = {"continue": "continue (no decision yet)",
              "accept_h0": "accept H0 (not stronger by elo1)",
              "accept_h1": "accept H1 (stronger)"}


def _sprt(data: ReportData) -> str:
    s = data.summary.get("sprt")
    if not s:
        return ""
    rows = [
        ("hypotheses", f"H0: Elo {s['elo0']:g}, H1: Elo {s['elo1']:g} (alpha {s['alpha']:g}, "
                       f"beta {s['beta']:g})"),
        ("outcomes", f"{s['kind']}: {', '.join(f'{c:g}' for c in s['counts'])}"),
        ("games", f"{s['games']:g}"),
        ("score", _pct(s["score"])),
        ("Elo", "-" if s["elo"] is None else f"{s['elo']:+.1f} ± "
         + ("-" if s["elo_ci95"] is None else f"{s['elo_ci95']:.1f}")),
        ("LOS", _pct(s["los"])),
        ("LLR", f"{s['llr']:.3f}"),
        ("bounds", f"{s['lower']:.3f}, {s['upper']:.3f}"),
        ("decision", _DECISIONS.get(s["decision"], s["decision"])),
    ]
    table = _table(("", ""), [f'<tr><td class="name">{escape(k)}</td>{_cell(v, k)}</tr>'
                              for k, v in rows], "sprt")
    chart = svg.line_chart({"LLR": [(0.0, 0.0), *((float(n), v) for n, v in data.llr)]},
                           x_label=data.llr_unit, y_label="LLR",
                           hlines=[(s["upper"], "accept H1"), (s["lower"], "accept H0")])
    return (f'<section><h2>SPRT</h2><div class="charts"><div>{table}</div>'
            f'<div class="chart" id="llr">{chart}</div></div></section>')


_FAULT_KINDS = ("timeout", "illegal_action", "protocol_violation", "disconnect", "crash",
                "startup_failure")


def _faults(summary: Mapping[str, Any]) -> str:
    faults = summary["faults"]
    forfeits = {n: s["forfeits"] for n, s in summary["stats"].items()}
    if not faults and not any(forfeits.values()):
        return '<p id="faults">No faults.</p>'
    names = sorted(set(faults) | {n for n, f in forfeits.items() if f})
    rows = [_row(n, "".join(_cell(faults.get(n, {}).get(k, 0), k) for k in _FAULT_KINDS)
                 + _cell(forfeits.get(n, 0), "forfeits")) for n in names]
    headers = ("Bot", "Timeouts", "Illegal", "Protocol", "Disconnects", "Crashes", "Start-up",
               "Forfeits")
    return _table(headers, rows, "faults")


def replay_file_base(ref: str) -> str:
    """A game's reference ``TOURNAMENT/KEY`` as a file name, unsafe characters replaced
    (without ``.html``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", ref) or "game"


def replay_file_names(games: Sequence[GameSummary]) -> list[str]:
    """A distinct file name per game: its reference ``TOURNAMENT/KEY`` with unsafe
    characters replaced, so tournaments sharing a results folder keep their own pages."""
    seen: set[str] = set()
    out = []
    for g in games:
        base = replay_file_base(g.ref)
        name, n = base, 1
        while name in seen:
            n += 1
            name = f"{base}-{n}"
        seen.add(name)
        out.append(f"{name}.html")
    return out


def _games(games: Sequence[GameSummary], files: Sequence[str]) -> str:
    rows = []
    for i, (g, file) in enumerate(zip(games, files, strict=True), 1):
        rows.append(
            f'<tr data-game="{escape(g.ref)}"><td class="name">{i}</td>'
            + _cell(g.key, "key", "name") + _cell(", ".join(g.seats), "seats", "name")
            + _cell(" & ".join(g.winners) or "-", "winner", "name win" if g.winners else "name")
            + _cell("-".join(map(str, g.scores)), "score") + _cell(g.hands, "hands")
            + _cell(g.termination, "termination") + _cell(g.faults, "faults")
            + _cell(f"{g.duration_s:.1f}s", "duration")
            + f'<td><a href="{REPLAY_DIR}/{escape(file)}">replay</a></td></tr>')
    headers = ("#", "Game", "Seats", "Winner", "Score", "Hands", "End", "Faults", "Time", "")
    return ('<input id="games-filter" type="search" placeholder="filter games (bot, key, '
            'termination...)" aria-label="filter games">'
            + _table(headers, rows, "games", left=(0, 1, 2, 3)))


def render_report_html(data: ReportData, replay_files: Sequence[str]) -> str:
    """The whole page for ``data``; ``replay_files`` are the game pages' names in
    ``replays/`` (one per game, in order)."""
    summary = data.summary
    by_end = ", ".join(f"{n} {k}" for k, n in summary["games"]["by_termination"].items())
    head = "".join(f"<li>{escape(line)}</li>" for line in data.rules_text)
    title = escape(data.title)
    body = f"""
<header><h1>{title}</h1><ul class="muted">{head}
<li id="game-count">Games: {summary['games']['total']}{f' ({escape(by_end)})' if by_end else ''}
</li></ul></header>
<section><h2>Standings</h2>{_standings(summary)}</section>
<div class="charts">
<section><h2>Likelihood of superiority (row above column)</h2>{_los(summary)}</section>
<section><h2>Head to head</h2>{_head_to_head(summary)}</section>
<section><h2>Head-to-head Elo</h2>{_duels(summary)}</section>
</div>
<section><h2>Euchre statistics</h2>{_stats(summary)}</section>
<section><h2>Rating against games played</h2>{_convergence(data)}</section>
{_sprt(data)}
<section><h2>Faults</h2>{_faults(summary)}</section>
<section><h2>Games</h2>{_games(data.games, replay_files)}</section>
<script>{assets.REPORT_JS}</script>"""
    return assets.page(title, assets.REPORT_CSS, body)


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8", newline="\n")
    os.replace(partial, path)


def _is_current(path: Path) -> bool:
    """Whether a replay page exists and was written by this version of the viewer (a
    stored game never changes, so such a page need not be written again)."""
    try:
        with path.open("rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return f'content="{VIEWER_STAMP}"'.encode() in head


def write_report_html(out_dir: Path, store: ResultsStore, tournament_id: str, *,
                      anchor: str | None = None, anchor_rating: float = 0.0,
                      name: str = "report.html") -> Path:
    """Write ``report.html`` for one tournament of ``store`` into ``out_dir`` (created if
    needed), and one replay page per game into ``out_dir/replays/``, which share the
    viewer's ``viewer.css`` and ``viewer.js`` there (pages already written by this
    version of the viewer are kept); return the report's path.
    ``anchor`` fixes a bot's rating as in ``summary.json``; ``name`` is the report's file
    name."""
    data = load_report(store, tournament_id, anchor=anchor, anchor_rating=anchor_rating)
    files = replay_file_names(data.games)
    replays = out_dir / REPLAY_DIR
    replays.mkdir(parents=True, exist_ok=True)
    for shared, text in VIEWER_FILES.items():  # one style sheet and script for the pages
        if not (replays / shared).is_file() or (replays / shared).read_text() != text:
            _write(replays / shared, text)
    for game, file in zip(data.games, files, strict=True):
        if not _is_current(replays / file):
            _write(replays / file, replay_html(dict(game.record), shared=True))
    path = out_dir / name
    _write(path, render_report_html(data, files))
    return path
