"""The live pages of a running referee: the tournament index, one tournament's page and
a ladder's page.

Each page is a small shell; its script opens a server-sent event stream (``EventSource``)
and draws the page from every message: the first arrives as soon as the stream opens,
the next whenever the data changes, so the page follows the tournaments without a reload.
The messages are plain JSON, built by :mod:`harness.tournament.live_site`:

* the index stream sends a list of tournaments: ``id``, ``name``, ``status``,
  ``games_done``, ``games_total``, ``detail`` and ``leader`` (the first of the
  standings, or null);
* a tournament's stream sends one tournament: the same fields, ``standings`` (``name``,
  ``elo``, ``ci95``, ``games``, ``score`` from 0 to 1), ``rate`` (games per minute over
  its latest games, or null), ``recent`` (its latest games, newest first: ``key``,
  ``seats``, ``scores``, ``winners``, ``termination``, ``hands``, ``faults``,
  ``finished_at`` and ``replay``, the replay page's address) and ``report`` (the address
  of its report.html, or null before it is written);
* a ladder's stream (:mod:`harness.ladder.live_site`) sends ``id``, ``standings`` (``name``,
  ``owner``, ``rated``, ``elo`` and ``ci95`` or, for a bot that won or lost every game,
  ``sweep`` and ``bound``, ``games``, ``retired``, ``benched`` (the reason, or null),
  ``inherited_from``) and ``recent`` (as a tournament's).

The script builds every element with ``textContent``, so no name is ever read as HTML.
"""

from __future__ import annotations

from html import escape

from harness.web import assets

__all__ = ["LIVE_CSS", "LIVE_JS", "index_page", "ladder_page", "tournament_page"]


def index_page(stream: str) -> str:
    """The index of every tournament, following the JSON stream at ``stream``."""
    body = """
<header><h1>Tournaments</h1><p class="muted" id="connection">connecting...</p></header>
<table id="tournaments"><thead><tr><th class="name">Tournament</th><th class="name">Name</th>
<th class="name">Status</th><th>Games</th><th class="name">Progress</th>
<th class="name">Leader</th></tr></thead><tbody></tbody></table>
<p id="none" class="muted" hidden>No tournaments yet: start one with
<code>euchre-harness ctl start CONFIG</code>.</p>"""
    return _page("Tournaments", "index", stream, body)


def tournament_page(tournament_id: str, stream: str) -> str:
    """One tournament's live page, following the JSON stream at ``stream``."""
    body = f"""
<p><a href="/">&larr; all tournaments</a></p>
<header><h1 id="title">{escape(tournament_id)}</h1>
<p><span id="status" class="status"></span> <span id="detail" class="muted"></span></p>
<p class="muted" id="connection">connecting...</p></header>
<section><h2>Progress</h2>
<p><span id="games-done">0</span> of <span id="games-total">?</span> games
<progress id="progress" max="1" value="0"></progress> <span id="rate" class="muted"></span>
</p><p id="report"></p></section>
<section><h2>Standings</h2>
<table id="standings"><thead><tr><th>#</th><th class="name">Bot</th><th>Elo</th><th>95%</th>
<th>Games</th><th>Score</th></tr></thead><tbody></tbody></table>
<p id="no-standings" class="muted">No rated games yet.</p></section>
{_RECENT}"""
    return _page(tournament_id, "tournament", stream, body)


def ladder_page(ladder_id: str, stream: str) -> str:
    """A ladder's live page, following the JSON stream at ``stream``."""
    body = f"""
<header><h1 id="title">{escape(ladder_id)}</h1>
<p class="muted" id="connection">connecting...</p></header>
<section><h2>Standings</h2>
<table id="standings"><thead><tr><th>#</th><th class="name">Bot</th><th class="name">Owner</th>
<th>Elo</th><th>95%</th><th>Games</th><th class="name">Status</th></tr></thead><tbody></tbody>
</table><p id="no-standings" class="muted">No bots yet.</p></section>
{_RECENT}"""
    return _page(ladder_id, "ladder", stream, body)


_RECENT = """<section><h2>Recent games</h2>
<table id="recent"><thead><tr><th class="name">Finished</th><th class="name">Game</th>
<th class="name">Seats</th><th class="name">Winner</th><th>Score</th><th>Hands</th>
<th class="name">End</th><th>Faults</th><th></th></tr></thead><tbody></tbody></table>
</section>"""


def _page(title: str, kind: str, stream: str, body: str) -> str:
    return assets.page(escape(title), LIVE_CSS,
                       f'<main data-page="{kind}" data-stream="{escape(stream)}" '
                       f'data-updates="0">{body}</main><script>{LIVE_JS}</script>')


LIVE_CSS = """
progress { width: 16rem; vertical-align: middle; }
.status { font-weight: 600; text-transform: uppercase; font-size: 12px; padding: .1rem .4rem;
          border-radius: 4px; background: var(--soft); }
.status.running { color: var(--accent); }
.status.finished { color: var(--good); }
.status.failed, .status.cancelled, .status.interrupted { color: var(--bad); }
td.win { color: var(--good); font-weight: 600; }
"""

LIVE_JS = """
"use strict";
(() => {
  const main = document.querySelector("main");
  const $ = (id) => document.getElementById(id);

  function cell(text, field, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (field) { td.dataset.field = field; }
    if (cls) { td.className = cls; }
    return td;
  }

  function link(text, href) {
    const a = document.createElement("a");
    a.textContent = text;
    a.href = href;
    return a;
  }

  function fill(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function status(span, t) {
    span.textContent = t.status;
    span.className = "status " + t.status;
  }

  function setBar(bar, done, total) {
    bar.max = total || 1;
    bar.value = total ? done : 0;
    return bar;
  }

  const signed = (x) => (x >= 0 ? "+" : "") + Math.round(x);

  function drawIndex(list) {
    fill(document.querySelector("#tournaments tbody"), list.map((t) => {
      const tr = document.createElement("tr");
      tr.dataset.tournament = t.id;
      const id = document.createElement("td");
      id.className = "name";
      id.append(link(t.id, "/t/" + encodeURIComponent(t.id)));
      const st = document.createElement("td");
      st.className = "name";
      const span = document.createElement("span");
      status(span, t);
      st.append(span);
      const bar = document.createElement("td");
      bar.className = "name";
      bar.append(setBar(document.createElement("progress"), t.games_done, t.games_total));
      tr.append(id, cell(t.name, "name", "name"), st,
                cell(t.games_done + "/" + (t.games_total || "?"), "games"), bar,
                cell(t.leader || "", "leader", "name"));
      return tr;
    }));
    $("none").hidden = list.length > 0;
  }

  function drawTournament(t) {
    document.title = t.name;
    $("title").textContent = t.name === t.id ? t.name : t.name + " (" + t.id + ")";
    status($("status"), t);
    $("detail").textContent = t.detail;
    $("games-done").textContent = t.games_done;
    $("games-total").textContent = t.games_total || "?";
    setBar($("progress"), t.games_done, t.games_total);
    let rate = "";
    if (t.rate) {
      rate = t.rate.toFixed(1) + " games/min";
      const left = t.games_total - t.games_done;
      if (t.status === "running" && left > 0) {
        rate += ", about " + Math.ceil(left / t.rate) + " min to go";
      }
    }
    $("rate").textContent = rate;
    const report = $("report");
    report.replaceChildren(t.report ? link("Full report (report.html)", t.report)
      : document.createTextNode("The full report is written when the tournament ends."));
    if (t.report) { report.firstChild.id = "report-link"; }
    fill(document.querySelector("#standings tbody"), t.standings.map((r, i) => {
      const tr = document.createElement("tr");
      tr.dataset.bot = r.name;
      tr.append(cell(i + 1, "rank"), cell(r.name, "name", "name"), cell(elo(r), "elo"),
                cell(interval(r), "ci95"), cell(r.games, "games"),
                cell((100 * r.score).toFixed(1) + "%", "score"));
      return tr;
    }));
    $("no-standings").hidden = t.standings.length > 0;
    drawRecent(t.recent);
  }

  // A bot that won or lost every game has no measured rating: show its bound. The
  // anchor's rating is fixed, the only one with no interval: mark it.
  const anchor = (r) => !r.sweep && r.elo !== null && r.ci95 === 0;
  const elo = (r) => r.sweep ? (r.bound === null || r.bound === undefined
      ? (r.sweep === "all_won" ? "won " : "lost ") + r.games + " of " + r.games
        + "; too few games to rate"
      : "all games " + (r.sweep === "all_won" ? "won: above " : "lost: below ")
        + signed(r.bound))
    : (r.elo === null ? "-" : signed(r.elo) + (anchor(r) ? " (anchor)" : ""));
  const interval = (r) => r.sweep || r.ci95 === null || anchor(r) ? "-"
    : "\\u00b1" + Math.round(r.ci95);

  function drawLadder(l) {
    fill(document.querySelector("#standings tbody"), l.standings.map((r, i) => {
      const tr = document.createElement("tr");
      tr.dataset.bot = r.name;
      const note = r.retired ? "retired" : r.benched ? "benched: " + r.benched
        : r.inherited_from ? "rating of " + r.inherited_from : "";
      tr.append(cell(r.rated ? i + 1 : "", "rank"), cell(r.name, "name", "name"),
                cell(r.owner, "owner", "name"), cell(elo(r), "elo"),
                cell(interval(r), "ci95"), cell(r.games, "games"),
                cell(note, "status", "name"));
      return tr;
    }));
    $("no-standings").hidden = l.standings.length > 0;
    drawRecent(l.recent);
  }

  function drawRecent(recent) {
    fill(document.querySelector("#recent tbody"), recent.map((g) => {
      const tr = document.createElement("tr");
      tr.dataset.game = g.key;
      const replay = document.createElement("td");
      replay.append(link("replay", g.replay));
      tr.append(cell(new Date(g.finished_at).toLocaleTimeString(), "finished", "name"),
                cell(g.key, "key", "name"), cell(g.seats.join(", "), "seats", "name"),
                cell(g.winners.join(" & ") || "-", "winner",
                     g.winners.length ? "name win" : "name"),
                cell(g.scores.join("-"), "score"), cell(g.hands, "hands"),
                cell(g.termination, "termination", "name"), cell(g.faults, "faults"),
                replay);
      return tr;
    }));
  }

  const draw = { index: drawIndex, tournament: drawTournament,
                 ladder: drawLadder }[main.dataset.page];
  function follow() {
    const source = new EventSource(main.dataset.stream);
    source.onopen = () => { $("connection").textContent = "live"; };
    source.onerror = () => {
      $("connection").textContent = "reconnecting...";
      // Refused (the server holds as many streams as it serves): the browser gives up,
      // so ask again a little later.
      if (source.readyState === EventSource.CLOSED) setTimeout(follow, 10000);
    };
    source.onmessage = (event) => {
      draw(JSON.parse(event.data));
      main.dataset.updates = String(Number(main.dataset.updates) + 1);
    };
  }
  follow();
})();
"""
