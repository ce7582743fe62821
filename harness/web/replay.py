"""The replay viewer: one self-contained HTML page per stored game.

:func:`replay_view` replays a game record through the rules engine
(:meth:`~harness.rules.game.Game.from_record` checks it; each hand is then played again
action by action on a fresh :class:`~harness.rules.hand.Hand`) and keeps, after every
action, what the page shows: the trick on the table and who won it, tricks won, trump,
the maker, who went alone or sits out, whose turn it is and the score. Which cards each
seat holds comes from the engine's hands before and after each action: a card that
appears was gained at that step (the upcard, or the dummy in cutthroat), one that goes
was played or discarded. Nothing here re-implements a rule. :func:`replay_html` wraps
the view in a page whose small script steps through it (each step after a hand's first
holds only what changed).
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import ConfigError, ReplayError
from harness.referee.botlog import without_log_quote
from harness.referee.outcome import TimeControl
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import Card, Suit
from harness.rules.config import Form
from harness.rules.game import Game
from harness.rules.hand import Hand, Phase
from harness.rules.scoring import HandResult, team_count, team_of
from harness.web import assets

__all__ = ["VIEWER_FILES", "VIEWER_STAMP", "pretty_card", "replay_html", "replay_view"]

VIEW_FORMAT = 3
"""Raise when :func:`replay_view`'s output changes, so pages written before are redone."""

VIEWER_STAMP = "euchre-harness replay " + hashlib.sha256(
    f"{VIEW_FORMAT}{assets.BASE_CSS}{assets.REPLAY_CSS}{assets.REPLAY_JS}".encode()
).hexdigest()[:16]
"""Written into every replay page's head: a page that carries it is current (a stored
game never changes), so :func:`~harness.web.report.write_report_html` keeps it."""

SUIT_SYMBOLS = {Suit.CLUBS: "\u2663", Suit.DIAMONDS: "\u2666", Suit.HEARTS: "\u2665",
                Suit.SPADES: "\u2660"}


def pretty_card(card: Card) -> str:
    """``"J♠"``, ``"10♥"`` style; the Joker is ``"Joker"``."""
    if card.suit is None:
        return "Joker"
    rank = "10" if card.rank.letter == "T" else card.rank.letter
    return rank + SUIT_SYMBOLS[card.suit]


def _suit_name(suit: Suit | None) -> str | None:
    return None if suit is None else suit.name.lower()


def _action_text(action: Action, phase: Phase, hand: Hand) -> str:
    kind = action.kind
    if kind is ActionKind.PASS:
        return "passes"
    if kind is ActionKind.ORDER_UP:
        return f"orders up {pretty_card(hand.upcard)}"
    if kind is ActionKind.TAKE_UPCARD:
        return f"takes {pretty_card(hand.upcard)}"
    if kind is ActionKind.LEAVE_UPCARD:
        return "leaves the upcard"
    if kind is ActionKind.CALL:
        assert action.suit is not None
        verb = "names" if phase is Phase.NAME_TRUMP else "calls"
        return f"{verb} {action.suit.name.lower()} {SUIT_SYMBOLS[action.suit]}"
    if kind is ActionKind.GO_ALONE:
        return "goes alone"
    if kind is ActionKind.NOT_ALONE:
        return "does not go alone"
    assert action.card is not None
    verb = "discards" if kind is ActionKind.DISCARD else "plays"
    return f"{verb} {pretty_card(action.card)}"


def _team_names(form: Form, names: Sequence[str]) -> list[str]:
    out = []
    for t in range(team_count(form)):
        seats = [s for s in range(len(names)) if team_of(form, s) == t]
        out.append(" & ".join(dict.fromkeys(names[s] for s in seats)))
    return out


def _result_text(result: HandResult, form: Form, names: Sequence[str]) -> str:
    kind = result.kind.value.replace("_", " ")
    teams = _team_names(form, names)
    gains = ", ".join(f"{teams[t]} +{p}" for t, p in enumerate(result.points) if p)
    if result.maker is None:
        return f"{kind}: everybody passed; no points"
    return f"{kind} (makers took {result.makers_tricks}): {gains}"


def _state(hand: Hand, scores: Sequence[int]) -> dict[str, Any]:
    """What the table shows after an action (cards held are tracked separately): the
    trick in progress, or the one just completed with its winner; ``number`` counts the
    tricks begun."""
    if hand.trick or not hand.tricks:
        trick, winner = hand.trick, None
    else:
        trick, winner = list(hand.tricks[-1].plays), hand.tricks[-1].winner
    return {
        "trick": [[s, str(c)] for s, c in trick], "winner": winner,
        "number": len(hand.tricks) + (1 if hand.trick else 0),
        "tricks": list(hand.tricks_won), "trump": _suit_name(hand.trump),
        "maker": hand.maker, "alone": list(hand.alone), "out": list(hand.sitting_out),
        "turn": hand.current, "score": list(scores),
    }


def _deltas(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first step whole, then each step as only what differs from the one before
    (besides ``seat``, ``text``, ``ms`` and ``eval``); the page's script fills the rest in."""
    out = steps[:1]
    for before, step in itertools.pairwise(steps):
        out.append({k: v for k, v in step.items()
                    if k in ("seat", "text", "ms", "eval") or before.get(k) != v})
    return out


class _Clock:
    """Each decision's time (the record's ``decision_ms``, one per action in order) and
    every seat's time bank after it, from the record's time control."""

    def __init__(self, record: Mapping[str, Any], players: int) -> None:
        try:
            tc = TimeControl.parse(str(record.get("time_control") or TimeControl()))
        except (ConfigError, ValueError):
            tc = TimeControl()
        self.per_ms = tc.per_decision * 1000
        self.bank = [tc.bank * 1000] * players
        times = record.get("decision_ms")
        self._times = iter(times if isinstance(times, list) else [])

    def tick(self, seat: int) -> dict[str, Any]:
        """``ms`` (None when the record has no time for it) and ``bank`` (ms per seat)."""
        ms = next(self._times, None)
        if isinstance(ms, (int, float)):
            self.bank[seat] = max(0.0, self.bank[seat] - max(0.0, ms - self.per_ms))
        else:
            ms = None
        return {"ms": ms, "bank": [round(b) for b in self.bank]}


def seat_labels(names: Sequence[str]) -> list[str]:
    """How the log names each seat: its bot's name, with the seat when that bot holds
    more than one ("heuristic (seat 2)")."""
    return [n if names.count(n) == 1 else f"{n} (seat {s})" for s, n in enumerate(names)]


def _hand_view(game: Game, recorded: Hand, names: Sequence[str], scores: list[int],
               clock: _Clock, evals: Mapping[int, Mapping[str, Any]] | None = None,
               first: int = 0) -> dict[str, Any]:
    """One hand's view; with ``evals`` (decision analyses by the decision's index in the
    game, ``first`` being this hand's first), each step carries its decision's ``eval``."""
    hand = Hand(game.config, recorded.dealer, recorded.deck)
    held = [list(h) for h in hand.hands]
    # per seat: [card, step gained (0 = dealt), step it left (or None), "play"/"discard"]
    cards: list[list[list[Any]]] = [[[str(c), 0, None, None] for c in h] for h in held]
    dummy = [str(c) for c in hand.dummy] if hand.dummy is not None else None
    dealer_name = seat_labels(names)[hand.dealer]
    steps = [{"seat": None, "text": f"{dealer_name} deals; {pretty_card(hand.upcard)} is "
                                    f"turned up", "ms": None,
              "bank": [round(b) for b in clock.bank], **_state(hand, scores)}]
    result: str | None = None
    for i, t in enumerate(recorded.transitions, 1):
        text = _action_text(t.action, t.phase, hand)
        hand.apply(t.action)
        after = [list(h) for h in hand.hands]
        for seat, (old, new) in enumerate(zip(held, after, strict=True)):
            for c in new:
                if c not in old:
                    cards[seat].append([str(c), i, None, None])
            for c in old:
                if c not in new:
                    entry = next(e for e in cards[seat] if e[0] == str(c) and e[2] is None)
                    entry[2] = i
                    entry[3] = "play" if t.action.kind is ActionKind.PLAY else "discard"
        held = after
        if hand.result is not None:
            for team, p in enumerate(hand.result.points):
                scores[team] += p
            result = _result_text(hand.result, game.config.form, names)
            text += "; " + result
        step = {"seat": t.seat, "text": text, **clock.tick(t.seat), **_state(hand, scores)}
        if evals is not None:
            step["eval"] = evals.get(first + i - 1)
        steps.append(step)
    if evals is not None:
        steps[0]["eval"] = None
    return {
        "dealer": hand.dealer, "upcard": str(hand.upcard),
        "kitty": [str(c) for c in hand.kitty], "dummy": dummy, "cards": cards,
        "steps": _deltas(steps), "result": result,
    }


def _first_line(detail: object) -> str:
    """A fault's detail as the page shows it: its first line. A fault's log tail is never
    shown; a detail stored by an earlier version, which held it, is cut before it."""
    return without_log_quote(str(detail or "").split("\n", 1)[0])


def replay_view(record: Mapping[str, Any],
                evals: Mapping[int, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The viewer's data for a game record (a referee record with ``seats``, ``faults``,
    ``termination`` and ``detail`` where present). A record that cannot be replayed gives
    ``error`` and no hands. ``evals``: decision analyses (``DecisionAnalysis.to_dict()``)
    by decision index, shown beside the steps they analyse."""
    from harness.results.game_text import describe_rules

    rules = record.get("rules") or {}
    view: dict[str, Any] = {
        "title": str(record.get("game_id") or (record.get("tournament") or {}).get("key")
                     or "game"),
        "rules": describe_rules(rules) if isinstance(rules, Mapping) else "?",
        "termination": str(record.get("termination", "")),
        "detail": _first_line(record.get("detail")),
        "faults": [f"{f.get('bot', '?')} (seat {f.get('seat', '?')}): {f.get('kind', '?')}: "
                   f"{_first_line(f.get('detail'))}" for f in record.get("faults") or []
                   if isinstance(f, Mapping)],
        "hands": [], "error": None,
    }
    try:
        game = Game.from_record(record)
    except (ReplayError, ConfigError) as exc:
        names = [str(n) for n in record.get("seats") or []]
        view.update(error=str(exc), names=names, labels=seat_labels(names), form="?",
                    teams=[], final=list(record.get("scores") or []))
        view["outcome"] = _outcome(record, names, view)
        return view
    form = game.config.form
    names = [str(n) for n in record.get("seats") or []]
    if len(names) != game.config.players:
        names = [f"seat {s}" for s in range(game.config.players)]
    scores = [0] * team_count(form)
    clock = _Clock(record, game.config.players)
    starts = list(itertools.accumulate((len(h.transitions) for h in game.hands), initial=0))
    view.update(names=names, labels=seat_labels(names), form=form.value,
                deck=game.config.deck.value, teams=_team_names(form, names),
                final=list(game.scores),
                hands=[_hand_view(game, h, names, scores, clock, evals, starts[i])
                       for i, h in enumerate(game.hands)],
                analysed=evals is not None)
    view["outcome"] = _outcome(record, names, view)
    return view


def _outcome(record: Mapping[str, Any], names: Sequence[str], view: Mapping[str, Any]) -> str:
    """One line: who won, the final score, how the game ended, and each fault once (a
    forfeit's fault is its ending)."""
    places = record.get("places") or []
    winners = list(dict.fromkeys(names[s] for s, p in enumerate(places)
                                 if p == 1 and s < len(names)))
    final = ", ".join(f"{t} {s}" for t, s in zip(view["teams"], view["final"], strict=False))
    if view["termination"] == "interrupted" or not winners:
        text = f"No result ({view['termination'] or 'unfinished'})"
    else:
        text = f"Won by {' & '.join(winners)}"
    text += f". Final score: {final or '-'}"
    if view["detail"] and view["termination"] != "normal":
        text += f". Ended by {view['termination']}: {view['detail']}"
    others = [f for f in view["faults"] if f.split(": ", 2)[-1] not in view["detail"]]
    return text + (f". Faults: {'; '.join(others)}" if others else "")


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


VIEWER_FILES = {"viewer.css": assets.BASE_CSS + assets.REPLAY_CSS,
                "viewer.js": assets.REPLAY_JS}
"""The viewer's style sheet and script, for a folder of replay pages that share them."""


def replay_html(record: dict[str, Any], analysis: Sequence[Any] | None = None, *,
                shared: bool = False) -> str:
    """A page (no network needed) that steps through the game hand by hand and trick by
    trick, with the keyboard (arrows, Page Up/Down, Home/End, space to play) or the
    mouse. Self-contained, or with ``shared`` linking ``viewer.css`` and ``viewer.js``
    beside it (:data:`VIEWER_FILES`: a folder of many pages keeps them once).
    ``analysis``: decision analyses (:class:`harness.analysis.DecisionAnalysis`) to show:
    an evaluation bar per analysed decision in the log, mistakes marked, and each legal
    action's value at the current step."""
    evals = None if analysis is None else {d.index: d.to_dict() for d in analysis}
    view = replay_view(record, evals)
    title = html.escape(f"Replay {view['title']}")
    script = ('<script src="viewer.js"></script>' if shared
              else f"<script>{assets.REPLAY_JS}</script>")
    return assets.page(title, assets.REPLAY_CSS, f"""
<header><h1>{title}</h1><p id="players"></p><p class="muted">{html.escape(view['rules'])}</p>
<p id="outcome"></p></header>
<nav id="controls" aria-label="steps">
<button id="first-hand" title="previous hand (Page Up)">&#x25C0;&#x25C0;</button>
<button id="prev" title="back one step (left arrow)">&#x25C0;</button>
<button id="next" title="forward one step (right arrow)">&#x25B6;</button>
<button id="next-hand" title="next hand (Page Down)">&#x25B6;&#x25B6;</button>
<button id="play" title="play the game step by step (space)">&#x25B6; play</button>
<select id="speed" aria-label="speed" title="autoplay speed">
<option value="0.5">0.5&#xD7;</option><option value="1" selected>1&#xD7;</option>
<option value="2">2&#xD7;</option><option value="4">4&#xD7;</option>
<option value="8">8&#xD7;</option></select>
<input id="slider" type="range" min="0" value="0" aria-label="step">
<span id="position"></span></nav>
<main id="viewer"><section id="table"></section>
<aside><div id="scorebox"><h2>Score</h2><div id="score"></div></div>
<div id="trumpbox"></div><div id="analysis" hidden></div>
<h2>This hand</h2><ol id="log"></ol></aside></main>
<script id="game-data" type="application/json">{_script_json(view)}</script>
{script}""", generator=VIEWER_STAMP, stylesheet="viewer.css" if shared else None)
