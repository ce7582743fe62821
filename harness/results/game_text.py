"""Show a stored game hand by hand, for the operator (every card is shown).

:func:`render_game` replays the record through the rules engine
(:meth:`~harness.rules.game.Game.from_record`, which ignores the referee's extra keys such
as ``seats``, ``faults`` and ``places``), so what it prints — the deal, the trump, each
trick's winner, every result and the running score — comes from the engine, not from
the recorded text. A record that cannot be replayed is reported, not raised.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import ConfigError, ReplayError
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import format_cards
from harness.rules.config import Form, RulesConfig
from harness.rules.game import Game
from harness.rules.hand import Hand, Phase
from harness.rules.scoring import HandResult, team_count, team_of
from harness.storage.results import GameRow

__all__ = ["describe_rules", "render_game"]

_LONER_LEAD = {"left_of_lone": "left of the lone player", "left_of_dealer": "left of dealer"}


def describe_rules(rules: Mapping[str, Any]) -> str:
    """One line for a record's ``rules`` (:meth:`RulesConfig.to_dict`), e.g.
    ``"four-handed, 24-card deck, to 10 points; partner may go alone, ..."``."""
    try:
        cfg = RulesConfig.from_dict(rules)
    except (ConfigError, TypeError) as exc:
        return f"unreadable rules ({exc})"
    options = [
        name for name, on in (
            ("dealer must take", cfg.dealer_must_take),
            ("turned-down suit may be called", cfg.allow_turned_down_suit),
            ("stick the dealer", cfg.stick_the_dealer),
            ("partner may go alone", cfg.partner_may_go_alone),
            ("lone defender", cfg.lone_defender),
        ) if on
    ]
    if cfg.form is not Form.TWO_HANDED:
        options.append(f"loner's lead: {_LONER_LEAD.get(cfg.loner_lead.value, '?')}")
    if cfg.deck.value == "25":
        options.append(f"Joker upcard: {cfg.joker_upcard.value.replace('_', ' ')}")
    head = f"{cfg.form.value}, {cfg.deck.value}-card deck, to {cfg.target} points"
    return f"{head}; {', '.join(options)}" if options else head


def _seat(seat: int, names: Sequence[str]) -> str:
    return f"seat {seat} ({names[seat]})" if seat < len(names) else f"seat {seat}"


def _team_label(form: Form, team: int, names: Sequence[str]) -> str:
    seats = [s for s in range(len(names)) if team_of(form, s) == team]
    return f"team {team} [{' & '.join(names[s] for s in seats)}]"


def _header(row: GameRow, form: Form | None, scores: Sequence[int]) -> list[str]:
    rec = row.record
    lines = [f"Game {row.tournament_id}/{row.game_key}  (seed {row.seed})"]
    for seat, name in enumerate(row.seats):
        team = f", team {team_of(form, seat)}" if form is Form.FOUR_HANDED else ""
        place = f", place {row.ranking[seat]}" if seat < len(row.ranking) else ""
        lines.append(f"  seat {seat}: {name}{team}{place}")
    lines.append(f"Rules: {describe_rules(rec.get('rules') or {})}")
    if "time_control" in rec or "fault_policy" in rec:
        lines.append(f"Time control: {rec.get('time_control', '?')}; "
                     f"fault policy: {rec.get('fault_policy', '?')}")
    term = row.termination.value + (f" — {rec['detail']}" if rec.get("detail") else "")
    lines.append(f"Termination: {term}")
    if form is not None:
        final = ", ".join(f"{_team_label(form, t, row.seats)} {p}"
                          for t, p in enumerate(scores))
        lines.append(f"Final score: {final}")
    lines.append(f"Faults: {len(row.faults) or 'none'}")
    lines.extend(f"  {_seat(f.seat, row.seats)}: {f.kind.value}: {f.detail}" for f in row.faults)
    return lines


_VERBS = {
    ActionKind.PASS: "passes",
    ActionKind.ORDER_UP: "orders it up",
    ActionKind.TAKE_UPCARD: "takes the upcard",
    ActionKind.LEAVE_UPCARD: "leaves the upcard",
    ActionKind.GO_ALONE: "goes alone",
    ActionKind.NOT_ALONE: "does not go alone",
}


def _describe_action(action: Action, phase: Phase) -> str:
    if action.kind is ActionKind.CALL:
        assert action.suit is not None
        verb = "names" if phase is Phase.NAME_TRUMP else "calls"
        return f"{verb} {action.suit.name.lower()}"
    if action.kind is ActionKind.DISCARD:
        return f"discards {action.card}"
    return _VERBS.get(action.kind, str(action))


def _deal_lines(hand: Hand, names: Sequence[str]) -> list[str]:
    lines = [f"  {_seat(s, names)}: {format_cards(cards)}" for s, cards in enumerate(hand.dealt)]
    if hand.dummy is not None:
        taken = "taken by the maker" if hand.dummy_taken else "not used"
        lines.append(f"  dummy ({taken}): {format_cards(hand.dummy)}")
    lines.append(f"  upcard: {hand.upcard}   kitty: {format_cards(hand.kitty)}")
    return lines


def _bidding_lines(hand: Hand, names: Sequence[str]) -> list[str]:
    return [f"    {_seat(t.seat, names)} {_describe_action(t.action, t.phase)}"
            for t in hand.transitions if t.phase is not Phase.PLAY]


def _trump_line(hand: Hand, names: Sequence[str]) -> str:
    if hand.trump is None or hand.maker is None:
        return "  trump: none"
    line = f"  trump: {hand.trump.name.lower()}, made by {_seat(hand.maker, names)}"
    if hand.alone:
        line += "; alone: " + ", ".join(_seat(s, names) for s in hand.alone)
    if hand.sitting_out:
        line += "; sitting out: " + ", ".join(_seat(s, names) for s in hand.sitting_out)
    return line


def _trick_lines(hand: Hand, names: Sequence[str]) -> list[str]:
    lines = []
    for i, trick in enumerate(hand.tricks, 1):
        plays = ", ".join(f"{_seat(s, names)} {c}" for s, c in trick.plays)
        lines.append(f"  trick {i}: led by {_seat(trick.leader, names)}: {plays} "
                     f"-> won by {_seat(trick.winner, names)}")
    if hand.trick:
        plays = ", ".join(f"{_seat(s, names)} {c}" for s, c in hand.trick)
        lines.append(f"  trick {len(hand.tricks) + 1} (unfinished): {plays}")
    return lines


def _result_line(result: HandResult, form: Form, names: Sequence[str],
                 running: Sequence[int]) -> str:
    kind = result.kind.value.replace("_", " ")
    if result.maker is None:
        text = f"  result: {kind}"
    else:
        text = f"  result: {kind} (makers took {result.makers_tricks})"
    gains = ", ".join(f"{_team_label(form, t, names)} +{p}"
                      for t, p in enumerate(result.points) if p)
    score = "-".join(str(s) for s in running)
    return f"{text}; {gains or 'no points'}; score {score}"


def _hand_lines(index: int, hand: Hand, form: Form, names: Sequence[str],
                running: list[int]) -> list[str]:
    lines = [f"Hand {index + 1}: dealer {_seat(hand.dealer, names)}"]
    lines.extend(_deal_lines(hand, names))
    lines.append("  bidding:")
    lines.extend(_bidding_lines(hand, names) or ["    (no decisions)"])
    lines.append(_trump_line(hand, names))
    lines.extend(_trick_lines(hand, names))
    if hand.result is None:
        lines.append("  result: the hand was not finished")
    else:
        for t, p in enumerate(hand.result.points):
            running[t] += p
        lines.append(_result_line(hand.result, form, names, running))
    return lines


def render_game(row: GameRow) -> str:
    """The whole game as text: a header, then every hand (deal, bidding, trump, tricks,
    result and running score), replayed through the rules engine. No trailing newline."""
    try:
        game = Game.from_record(row.record)
    except ReplayError as exc:
        lines = _header(row, None, row.scores)
        lines.append(f"The record cannot be replayed: {exc}")
        return "\n".join(lines)
    form = game.config.form
    names = list(row.seats) or [f"seat {s}" for s in range(game.config.players)]
    lines = _header(row, form, game.scores)
    running = [0] * team_count(form)
    for i, hand in enumerate(game.hands):
        lines.append("")
        lines.extend(_hand_lines(i, hand, form, names, running))
    return "\n".join(lines)
