"""The style sheets and scripts inlined into the pages (kept here, as Python strings, so
that they ship with the package and every page works offline on its own)."""

from __future__ import annotations

__all__ = ["REPLAY_CSS", "REPLAY_JS", "REPORT_CSS", "REPORT_JS", "page"]


def page(title: str, css: str, body: str, generator: str = "euchre-harness", *,
         stylesheet: str | None = None) -> str:
    """A whole HTML document; ``title`` must already be escaped. ``generator`` goes into
    a meta tag in the first lines (see :data:`harness.web.replay.VIEWER_STAMP`). With
    ``stylesheet`` (a relative URL) the page links that file, which holds
    :data:`BASE_CSS` and ``css``, instead of inlining them."""
    style = (f'<link rel="stylesheet" href="{stylesheet}">' if stylesheet
             else f"<style>{BASE_CSS}{css}</style>")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="{generator}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
{style}
</head>
<body>
{body}
</body>
</html>
"""


BASE_CSS = """
:root { --fg: #1d2433; --muted: #667085; --line: #d0d5dd; --bg: #ffffff; --soft: #f4f6fa;
        --accent: #2f6fde; --good: #1a7f4b; --bad: #c0392b; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); background: var(--bg); margin: 0 auto; padding: 1rem 1.5rem;
       max-width: 1200px; }
h1 { font-size: 1.5rem; margin: .2rem 0; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
.muted { color: var(--muted); }
table { border-collapse: collapse; margin: .3rem 0 1rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); text-align: right; }
th { background: var(--soft); font-weight: 600; }
td.name, th.name { text-align: left; }
a { color: var(--accent); }
svg text { font: 12px system-ui, sans-serif; fill: var(--fg); }
@media (max-width: 640px) {  /* a phone: the page never scrolls sideways, wide tables do */
  body { padding: .6rem; }
  table { display: block; max-width: 100%; overflow-x: auto; }
  svg { max-width: 100%; height: auto; }
  th, td { padding: .2rem .35rem; }
}
"""

REPORT_CSS = """
section { margin-bottom: 1.5rem; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
.chart { border: 1px solid var(--line); border-radius: 6px; padding: .4rem; background: #fff;
         width: fit-content; }
.legend { font-size: 12px; color: var(--muted); max-width: 32rem; }
#games-filter { margin: .3rem 0; padding: .25rem .5rem; width: 18rem; max-width: 100%; }
.chart, .charts > * { max-width: 100%; min-width: 0; overflow-x: auto; }
tr.hidden { display: none; }
td.win { color: var(--good); font-weight: 600; }
"""

REPORT_JS = """
"use strict";
(() => {
  const box = document.getElementById("games-filter");
  if (!box) { return; }
  const rows = Array.from(document.querySelectorAll("#games tbody tr"));
  box.addEventListener("input", () => {
    const words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    for (const row of rows) {
      const text = row.textContent.toLowerCase();
      row.classList.toggle("hidden", !words.every((w) => text.includes(w)));
    }
  });
})();
"""

REPLAY_CSS = """
#controls { display: flex; gap: .4rem; align-items: center; margin: .6rem 0;
            position: sticky; top: 0; background: var(--bg); padding: .3rem 0; }
#controls button { font-size: 1rem; min-width: 2.4rem; padding: .2rem .5rem; cursor: pointer; }
#slider { flex: 1; min-width: 6rem; }
.badge.clock { background: #e0f2fe; }
#viewer { display: grid; grid-template-columns: 1fr 18rem; gap: 1rem; align-items: start; }
#table { display: grid; gap: .6rem; background: #2d6a4f; border-radius: 10px; padding: .8rem;
         grid-template-columns: 1fr 1.2fr 1fr;
         grid-template-areas: "kitty north info" "west center east" ". south ."; }
.seat { background: rgba(255,255,255,.92); border-radius: 8px; padding: .4rem .5rem;
        min-height: 5.5rem; border: 3px solid transparent; }
.seat.turn { border-color: #f4c430; }
.seat.sitting-out { opacity: .55; }
.seat .who { font-weight: 600; display: flex; flex-wrap: wrap; gap: .3rem; align-items: center; }
.badge { font-size: 11px; font-weight: 600; border-radius: 4px; padding: 0 .3rem;
         background: var(--soft); color: var(--fg); border: 1px solid var(--line); }
.badge.maker { background: #fde68a; } .badge.alone { background: #fca5a5; }
.badge.dealer { background: #bfdbfe; }
.cards { display: flex; flex-wrap: wrap; gap: .2rem; margin-top: .3rem; }
.card { display: inline-block; min-width: 2.3rem; padding: .25rem .2rem; text-align: center;
        background: #fff; border: 1px solid #98a2b3; border-radius: 5px; font-weight: 600;
        font-size: 15px; color: #111; }
.card.red { color: #c0392b; } .card.joker { color: #7c3aed; }
.card.played { opacity: .28; }
.card.discarded { opacity: .45; text-decoration: line-through; }
.card.gained { border-style: dashed; border-color: #2f6fde; }
.card.winner { box-shadow: 0 0 0 3px #f4c430; }
.pos-north { grid-area: north; } .pos-south { grid-area: south; }
.pos-west { grid-area: west; } .pos-east { grid-area: east; }
.pos-kitty { grid-area: kitty; } .pos-info { grid-area: info; }
#center { grid-area: center; display: grid; grid-template-columns: repeat(3, 1fr);
          grid-template-areas: ". north ." "west caption east" ". south .";
          align-items: center; justify-items: center; min-height: 9rem; color: #fff; }
#center .caption { grid-area: caption; text-align: center; font-size: 12px; }
.pos-kitty, .pos-info { background: rgba(255,255,255,.15); color: #fff; border-radius: 8px;
                        padding: .4rem .5rem; font-size: 12px; }
aside h2 { margin-top: .2rem; }
#score { font-size: 1.1rem; }
#score div { display: flex; justify-content: space-between; }
#trumpbox { margin: .6rem 0; padding: .4rem; background: var(--soft); border-radius: 6px; }
#log { padding-left: 1.6rem; margin: 0; max-height: 30rem; overflow-y: auto; font-size: 13px; }
#log li { cursor: pointer; padding: 1px 2px; }
#log li.future { color: #b0b7c3; }
#log li.current { background: #fde68a; }
.error { color: var(--bad); font-weight: 600; }
#analysis { margin: .6rem 0; padding: .4rem; background: var(--soft); border-radius: 6px;
            font-size: 13px; }
#analysis table { width: 100%; border-collapse: collapse; }
#analysis td { padding: 1px 3px; } #analysis td.value { text-align: right; }
#analysis tr.chosen { font-weight: 600; }
#analysis tr.best td:first-child::after { content: " \u2605"; }
.evalbar { display: inline-block; width: 3.2rem; height: .55rem; margin-right: .3rem;
           background: #e5e7eb; border-radius: 3px; vertical-align: middle; position: relative; }
.evalbar span { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 3px;
                background: #16a34a; }
.evalbar.mistake span { background: #dc2626; }
#log li.mistake { color: var(--bad); }
#log li.mistake::after { content: " \u2717 mistake"; font-weight: 600; }
.seat, #center, .pos-kitty, .pos-info, #viewer > * { min-width: 0; }
@media (max-width: 640px) {  /* a phone: one column, smaller cards */
  #viewer { grid-template-columns: 1fr; }
  #table { padding: .35rem; gap: .3rem; }
  .seat { padding: .25rem; min-height: 4rem; }
  .card { min-width: 1.55rem; padding: .15rem .1rem; font-size: 12px; }
  #controls { flex-wrap: wrap; }
  #log { max-height: 16rem; }
}
"""

REPLAY_JS = """
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("game-data").textContent);
  const SUITS = { c: "\\u2663", d: "\\u2666", h: "\\u2665", s: "\\u2660" };
  const PLACES = {
    "four-handed": ["south", "west", "north", "east"],
    "two-handed": ["south", "north"],
    "cutthroat": ["south", "west", "east"],
  };
  const $ = (id) => document.getElementById(id);
  const make = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  };
  const cardEl = (code, extra) => {
    const e = make("span", "card" + (extra ? " " + extra : ""));
    e.dataset.card = code;
    if (code === "JK") {
      e.textContent = "Joker";
      e.classList.add("joker");
    } else {
      e.textContent = (code[0] === "T" ? "10" : code[0]) + SUITS[code[1]];
      if (code[1] === "d" || code[1] === "h") { e.classList.add("red"); }
    }
    return e;
  };
  const names = data.names || [];
  const labels = data.labels || names;  // a bot in several seats is named with its seat
  $("players").textContent = names.map((n, s) => "seat " + s + ": " + n).join(" \\u00b7 ");
  $("outcome").textContent = data.outcome;
  const seconds = (ms) => (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + " s";
  const took = (ms) => ms === null || ms === undefined ? ""
    : " \\u00b7 " + (ms < 1000 ? Math.round(ms) + " ms" : seconds(ms));
  if (data.error) {
    $("viewer").replaceChildren(make("p", "error", "This game cannot be replayed: " + data.error));
    $("controls").hidden = true;
    return;
  }
  // Each step after a hand's first holds only what changed: fill in the rest.
  for (const h of data.hands) {
    for (let i = 1; i < h.steps.length; i++) {
      h.steps[i] = Object.assign({}, h.steps[i - 1], h.steps[i]);
    }
  }
  const places = PLACES[data.form];
  const flat = [];
  data.hands.forEach((h, hi) => h.steps.forEach((s, si) => flat.push([hi, si])));
  const slider = $("slider");
  slider.max = String(flat.length - 1);
  let pos = 0;

  // Which seat holds a card that was gained by step si (the dummy's or the upcard).
  const gainedBy = (hand, code, si) => hand.cards.some(
    (cs) => cs.some((c) => c[0] === code && c[1] > 0 && c[1] <= si));

  function seatPanel(hand, step, seat, si) {
    const panel = make("div", "seat pos-" + places[seat]);
    panel.dataset.seat = String(seat);
    if (step.turn === seat) { panel.classList.add("turn"); }
    const out = step.out.includes(seat);
    if (out) { panel.classList.add("sitting-out"); }
    const who = make("div", "who");
    who.append(make("span", "", names[seat] + " (seat " + seat + ")"));
    if (hand.dealer === seat) { who.append(make("span", "badge dealer", "dealer")); }
    if (step.maker === seat) { who.append(make("span", "badge maker", "maker")); }
    if (step.alone.includes(seat)) { who.append(make("span", "badge alone", "alone")); }
    if (out) { who.append(make("span", "badge", "sitting out")); }
    who.append(make("span", "badge tricks", "tricks " + step.tricks[seat]));
    if (step.bank) {
      const clock = make("span", "badge clock", "bank " + seconds(step.bank[seat]));
      clock.title = "time bank left";
      who.append(clock);
    }
    const cards = make("div", "cards");
    for (const [code, gained, left, how] of hand.cards[seat]) {
      if (gained > si) { continue; }
      let cls = gained > 0 ? "gained" : "";
      if (left !== null && left <= si) { cls += how === "play" ? " played" : " discarded"; }
      cards.append(cardEl(code, cls.trim()));
    }
    panel.append(who, cards);
    return panel;
  }

  function kittyPanel(hand, si) {
    const box = make("div", "pos-kitty");
    box.append(make("div", "", "Upcard"));
    const up = make("div", "cards");
    up.append(cardEl(hand.upcard, gainedBy(hand, hand.upcard, si) ? "played" : ""));
    box.append(up, make("div", "", "Kitty (not dealt)"));
    const rest = make("div", "cards");
    hand.kitty.slice(1).forEach((c) => rest.append(cardEl(c)));
    box.append(rest);
    return box;
  }

  function dummyPanel(hand, si) {
    const box = make("div", "seat pos-north dummy");
    box.append(make("div", "who", "Dummy"));
    const cards = make("div", "cards");
    hand.dummy.forEach((c) => cards.append(cardEl(c, gainedBy(hand, c, si) ? "played" : "")));
    box.append(cards);
    return box;
  }

  function center(step) {
    const box = make("div", "");
    box.id = "center";
    for (const [seat, code] of step.trick) {
      const c = cardEl(code, step.winner === seat ? "winner" : "");
      c.style.gridArea = places[seat];
      box.append(c);
    }
    let caption = "";
    if (step.trick.length) {
      caption = "Trick " + step.number;
      if (step.winner !== null) { caption += ": won by " + labels[step.winner]; }
    }
    box.append(make("div", "caption", caption));
    return box;
  }

  function render() {
    const [hi, si] = flat[pos];
    const hand = data.hands[hi];
    const step = hand.steps[si];
    const table = $("table");
    table.replaceChildren(kittyPanel(hand, si), center(step));
    places.forEach((_, seat) => table.append(seatPanel(hand, step, seat, si)));
    if (hand.dummy) { table.append(dummyPanel(hand, si)); }
    const info = make("div", "pos-info");
    info.append(make("div", "", "Hand " + (hi + 1) + ", dealer " + labels[hand.dealer]));
    if (si === hand.steps.length - 1) {
      info.append(make("div", "", hand.result || "The game ended here (" + data.termination +
        "); the hand was not finished."));
    }
    table.append(info);

    const score = $("score");
    score.replaceChildren(...data.teams.map((t, i) => {
      const row = make("div", "");
      row.append(make("span", "", t), make("b", "", String(step.score[i])));
      return row;
    }));
    score.dataset.score = step.score.join("-");
    const trump = $("trumpbox");
    if (step.trump) {
      const suit = SUITS[step.trump[0]];
      trump.textContent = "Trump: " + step.trump + " " + suit + ", made by " + labels[step.maker] +
        (step.alone.length ? "; alone: " + step.alone.map((s) => labels[s]).join(", ") : "");
    } else {
      trump.textContent = "Trump: not yet made";
    }
    const log = $("log");
    log.replaceChildren(...hand.steps.map((s, i) => {
      const li = make("li", i > si ? "future" : (i === si ? "current" : ""),
        (s.seat === null ? "" : labels[s.seat] + " ") + s.text + took(s.ms));
      if (s.eval) {
        // The bar: the chosen action's value against the best, on the scale of the
        // decision's best and worst actions (full: the best was chosen).
        const vals = Object.values(s.eval.values);
        const lo = Math.min(...vals), hi = Math.max(...vals);
        const chosen = s.eval.values[s.eval.chosen];
        const bar = make("span", "evalbar" + (s.eval.mistake ? " mistake" : ""));
        const fill = make("span", "");
        fill.style.width = (hi > lo ? 100 * (chosen - lo) / (hi - lo) : 100).toFixed(0) + "%";
        bar.title = "loss " + s.eval.loss.toFixed(2) + " points";
        bar.append(fill);
        li.prepend(bar);
        if (s.eval.mistake) { li.classList.add("mistake"); }
      }
      li.addEventListener("click", () => go(pos - si + i));
      return li;
    }));
    const box = $("analysis");
    box.hidden = !data.analysed;
    if (data.analysed) {
      box.replaceChildren(make("h2", "", "Analysis"));
      if (step.eval) {
        const e = step.eval;
        box.append(make("div", "", names[e.seat] + ", " + e.phase + ": chose " + e.chosen +
          ", loss " + e.loss.toFixed(2) + (e.mistake ? " (mistake)" : "")));
        const table = make("table", "");
        Object.entries(e.values).sort((a, b) => b[1] - a[1]).forEach(([action, v]) => {
          const row = make("tr", (action === e.chosen ? "chosen" : "") +
            (action === e.best ? " best" : ""));
          row.dataset.action = action;
          row.append(make("td", "", action), make("td", "value", (v >= 0 ? "+" : "") +
            v.toFixed(2)));
          table.append(row);
        });
        box.append(table);
      } else {
        box.append(make("div", "muted", "no choice to analyse at this step"));
      }
    }
    const current = log.querySelector(".current");
    if (current) { current.scrollIntoView({ block: "nearest" }); }
    $("position").textContent = "hand " + (hi + 1) + "/" + data.hands.length + ", step " + si +
      "/" + (hand.steps.length - 1);
    slider.value = String(pos);
    $("prev").disabled = $("first-hand").disabled = pos === 0;
    $("next").disabled = $("next-hand").disabled = pos === flat.length - 1;
    document.body.dataset.position = String(pos);
    document.body.dataset.last = String(flat.length - 1);
  }

  function go(p) {
    pos = Math.max(0, Math.min(flat.length - 1, p));
    render();
  }

  // Autoplay: a step every 0.8 s divided by the speed, until the end or a pause.
  let timer = null;
  const playButton = $("play");
  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playButton.textContent = "\\u25B6 play";
    document.body.dataset.playing = "false";
  }
  function play() {
    if (pos === flat.length - 1) { go(0); }
    timer = setInterval(() => {
      if (pos >= flat.length - 1) { stop(); } else { go(pos + 1); }
    }, 800 / Number($("speed").value));
    playButton.textContent = "\\u23F8 pause";
    document.body.dataset.playing = "true";
  }
  playButton.addEventListener("click", () => (timer === null ? play() : stop()));
  $("speed").addEventListener("change", () => { if (timer !== null) { stop(); play(); } });
  function handStart(p) { return p - flat[p][1]; }
  function nextHand() {
    const [hi] = flat[pos];
    const n = flat.findIndex(([h]) => h === hi + 1);
    go(n < 0 ? flat.length - 1 : n);
  }
  function prevHand() {
    const start = handStart(pos);
    go(pos > start ? start : handStart(Math.max(0, start - 1)));
  }

  $("next").addEventListener("click", () => go(pos + 1));
  $("prev").addEventListener("click", () => go(pos - 1));
  $("next-hand").addEventListener("click", nextHand);
  $("first-hand").addEventListener("click", prevHand);
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.addEventListener("keydown", (ev) => {
    if (ev.target === slider) { return; }
    const keys = {
      ArrowRight: () => go(pos + 1), ArrowLeft: () => go(pos - 1),
      PageDown: nextHand, PageUp: prevHand,
      Home: () => go(0), End: () => go(flat.length - 1),
      " ": () => (timer === null ? play() : stop()),
    };
    const f = keys[ev.key];
    if (f) { ev.preventDefault(); f(); }
  });
  render();
})();
"""
