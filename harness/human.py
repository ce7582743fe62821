"""A human seat: a person plays one seat of a game from the terminal.

:class:`HumanBot` is an ordinary SDK bot (:class:`harness.sdk.Bot`) whose decisions come
from the keyboard. It prints the events of the game as they reach its seat (bids, trump,
every card played, trick and hand results), and at each decision the table (dealer,
upcard, trump, score, the trick so far) and the hand sorted by suit with the trumps
marked, then the legal choices, numbered. A wrong answer is explained and asked again; it
never reaches the referee, so a person cannot forfeit by a typo. ``q`` leaves the game
(:class:`HumanQuit`).

``euchre-harness play`` (:mod:`harness.cli_play`) seats it against bots.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import HarnessError
from harness.protocol import convert
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import EFFECTIVE_SUIT, NO_TRUMP_INDEX, TRUMP_POWER, Card, Suit
from harness.rules.config import Form, RulesConfig
from harness.rules.observation import Observation
from harness.sdk import Bot

TRUMP_MARK = "*"
QUIT_WORDS = frozenset({"q", "quit", "exit"})


class HumanQuit(HarnessError):
    """The person chose to leave the game (``q``, or the end of the input)."""


# ---------------------------------------------------------------------------- the table
class Table:
    """Names the seats from the person's point of view: ``You``, and the others by where
    they sit (four-handed: West, North (partner), East; cutthroat: Left, Right; two-handed:
    Opponent), each with the entrant's name."""

    def __init__(self, rules: RulesConfig, me: int, names: Sequence[str]) -> None:
        self.rules = rules
        self.me = me
        self.names = list(names)
        n = rules.players
        places = {Form.FOUR_HANDED: ("West", "North", "East"),
                  Form.CUTTHROAT: ("Left", "Right"),
                  Form.TWO_HANDED: ("Opponent",)}[rules.form]
        self.places = {(me + k + 1) % n: place for k, place in enumerate(places)}

    def who(self, seat: int) -> str:
        return "You" if seat == self.me else self.places[seat]

    def seating(self) -> str:
        parts = []
        for seat in range(self.rules.players):
            if seat == self.me:
                continue
            role = " (your partner)" if self.partner(seat) else ""
            parts.append(f"{self.places[seat]}: {self.names[seat]}{role}")
        return "; ".join(parts)

    def partner(self, seat: int) -> bool:
        return self.rules.form is Form.FOUR_HANDED and seat == (self.me + 2) % 4

    def scores(self, scores: Sequence[int]) -> str:
        if self.rules.form is Form.FOUR_HANDED:
            us = self.me % 2
            return f"you & North {scores[us]}, West & East {scores[1 - us]}"
        return ", ".join(f"{self.who(s)} {scores[s]}" for s in range(len(scores)))


# ---------------------------------------------------------------------------- cards
def suit_name(suit: Suit) -> str:
    return suit.name.lower()


def card_text(card: Card, trump: Suit | None) -> str:
    """The card as the engine writes it (``Js``, ``Th``, ``JK``), ``*`` after a trump."""
    if trump is not None and TRUMP_POWER[trump][card.id]:
        return f"{card}{TRUMP_MARK}"
    return str(card)


def sorted_hand(cards: Sequence[Card], trump: Suit | None) -> list[list[Card]]:
    """The cards grouped by the suit they follow (the left bower and the Joker with the
    trumps), trumps first, each group from the highest card down."""
    index = NO_TRUMP_INDEX if trump is None else trump
    groups: dict[Suit | None, list[Card]] = {}
    for card in cards:
        groups.setdefault(EFFECTIVE_SUIT[index][card.id], []).append(card)

    def order(suit: Suit | None) -> int:
        return -1 if suit is trump else 4 if suit is None else int(suit)

    def strength(card: Card) -> int:
        power = TRUMP_POWER[index][card.id] if trump is not None else 0
        return power or int(card.rank)

    return [sorted(groups[s], key=strength, reverse=True) for s in sorted(groups, key=order)]


def hand_text(cards: Sequence[Card], trump: Suit | None) -> str:
    if not cards:
        return "(no cards)"
    return "   ".join(" ".join(card_text(c, trump) for c in group)
                      for group in sorted_hand(cards, trump))


# ---------------------------------------------------------------------------- actions
def action_text(action: Action, obs: Observation) -> str:
    """A choice as the person reads it."""
    kind = action.kind
    if kind is ActionKind.PLAY or kind is ActionKind.DISCARD:
        assert action.card is not None
        card = card_text(action.card, obs.trump)
        return card if kind is ActionKind.PLAY else f"discard {card}"
    if kind is ActionKind.CALL:
        assert action.suit is not None
        return f"call {suit_name(action.suit)}"
    return {
        ActionKind.PASS: "pass",
        ActionKind.ORDER_UP: f"order up {obs.upcard}",
        ActionKind.TAKE_UPCARD: f"take {obs.upcard}",
        ActionKind.LEAVE_UPCARD: f"leave {obs.upcard}",
        ActionKind.GO_ALONE: "go alone",
        ActionKind.NOT_ALONE: "not alone",
    }[kind]


def bid_text(action: Action) -> str:
    """Another seat's bid, as a verb phrase."""
    kind = action.kind
    if kind is ActionKind.CALL:
        assert action.suit is not None
        return f"calls {suit_name(action.suit)}"
    return {ActionKind.PASS: "passes", ActionKind.ORDER_UP: "orders it up",
            ActionKind.TAKE_UPCARD: "takes the upcard",
            ActionKind.LEAVE_UPCARD: "leaves the upcard"}.get(kind, str(action))


def parse_choice(answer: str, choices: Sequence[str]) -> int | None:
    """The index of the choice ``answer`` names: its number (1-based) or its text
    (``Js``, ``pass``, ``call hearts``...), ignoring case and the trump mark."""
    text = answer.strip().lower().replace(TRUMP_MARK, "")
    if text.isdigit():
        number = int(text)
        return number - 1 if 1 <= number <= len(choices) else None
    plain = [c.lower().replace(TRUMP_MARK, "") for c in choices]
    return plain.index(text) if text and text in plain else None


# ---------------------------------------------------------------------------- the bot
class HumanBot(Bot):
    """An SDK bot played by a person. ``read`` asks for one line (``input`` by default;
    it raises EOFError at the end of the input) and ``out`` is where the screen goes."""

    name = "human"
    version = "1.0"

    def __init__(self, *, read: Callable[[str], str] = input,
                 out: TextIO | None = None) -> None:
        self.read = read
        self.out = out or sys.stdout
        self.table: Table | None = None
        self.pending: list[rpb.GameEvent] = []  # events not shown yet
        self.shown_hand = -1  # the last hand whose header is on the screen
        self.over = asyncio.Event()  # set when the end of a game has been shown

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # ------------------------------------------------------------------ life cycle
    def on_game_start(self, rules: RulesConfig, seat: int, names: Sequence[str]) -> None:
        self.table = Table(rules, seat, names)
        self.pending.clear()
        self.shown_hand = -1
        self.say(f"Euchre, {rules.form.value}, {rules.deck.value}-card deck, "
                 f"to {rules.target} points.")
        self.say(self.table.seating())
        self.say(f"Cards: 9-A by suit (c d h s), T = ten, JK = Joker; {TRUMP_MARK} marks a "
                 f"trump. Answer with the number of a choice, or q to quit.")

    def on_event(self, event: rpb.GameEvent) -> None:
        # Events come in order before each decision (or the game's end); they are shown
        # together with the state they lead to.
        self.pending.append(event)

    def on_game_over(self, message: rpb.GameOver) -> None:
        self.show_events(None)
        table = self._table()
        self.say()
        self.say("=" * 72)
        place = {1: "You win!", 2: "You lose."}.get(message.your_place, "")
        if table.rules.form is Form.CUTTHROAT:
            place = f"You finish {('first', 'second', 'third')[message.your_place - 1]}."
        if message.termination != rpb.GAME_TERMINATION_NORMAL:
            place = f"The game ended early: {message.detail}"
        self.say(f"Game over. {place}  Final score: {table.scores(message.scores)}")
        self.over.set()

    # ------------------------------------------------------------------ decisions
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        self.show_events(obs)
        self.show_table(obs)
        choices = [action_text(a, obs) for a in legal]
        self.say("Your choices:  " + "   ".join(f"{i}) {c}" for i, c in enumerate(choices, 1)))
        prompt = f"Your choice [1-{len(choices)}]: "
        while True:
            try:
                answer = self.read(prompt)
            except EOFError:
                raise HumanQuit("the input ended") from None
            if answer.strip().lower() in QUIT_WORDS:
                raise HumanQuit("you left the game")
            picked = parse_choice(answer, choices)
            if picked is not None:
                return legal[picked]
            self.say(f"{answer.strip()!r} is not one of the choices: type a number from 1 "
                     f"to {len(choices)} (or q to quit).")

    # ------------------------------------------------------------------ the screen
    def _table(self) -> Table:
        if self.table is None:
            raise HarnessError("a decision arrived before the game started")
        return self.table

    def show_hand_header(self, number: int, obs: Observation | None) -> None:
        table = self._table()
        self.say()
        line = f"--- Hand {number + 1} "
        if obs is not None and obs.hand_number == number:
            line += (f"· dealer {table.who(obs.dealer)} · upcard {obs.upcard} "
                     f"· score {table.scores(obs.scores)} ")
        self.say(line + "-" * max(0, 72 - len(line)))
        self.shown_hand = number

    def show_events(self, obs: Observation | None) -> None:
        table = self._table()
        for event in self.pending:
            if event.hand_number != self.shown_hand:
                self.show_hand_header(event.hand_number, obs)
            line = event_text(event, table)
            if line:
                self.say(line)
        self.pending.clear()
        if obs is not None and obs.hand_number != self.shown_hand:
            self.show_hand_header(obs.hand_number, obs)

    def show_table(self, obs: Observation) -> None:
        table = self._table()
        self.say()
        if obs.trump is None:
            state = f"Upcard {obs.upcard}" + (" (turned down)" if obs.upcard_turned_down
                                              else "")
        else:
            maker = "" if obs.maker is None else f", made by {table.who(obs.maker)}"
            alone = "".join(f", {table.who(s)} alone" for s in obs.alone)
            state = f"Trump {suit_name(obs.trump)}{maker}{alone}"
        self.say(f"  Dealer {table.who(obs.dealer)} · {state} · "
                 f"score {table.scores(obs.scores)}")
        if obs.tricks or obs.current_trick:
            won = ", ".join(f"{table.who(s)} {n}" for s, n in enumerate(obs.tricks_won)
                            if s not in obs.sitting_out)
            self.say(f"  Tricks won: {won}")
        if obs.current_trick:
            plays = ", ".join(f"{table.who(s)} {card_text(c, obs.trump)}"
                              for s, c in obs.current_trick)
            self.say(f"  This trick: {plays}")
        if obs.dummy:
            self.say(f"  The dummy you took: {hand_text(obs.dummy, obs.trump)}")
        self.say(f"  Your hand:  {hand_text(obs.hand, obs.trump)}")


def event_text(event: rpb.GameEvent, table: Table) -> str:
    """One line for one event ("" for an event not worth a line)."""
    which = event.WhichOneof("event")
    who = table.who
    if which == "bid":
        return f"  {who(event.bid.seat)} {bid_text(convert.action_from_pb(event.bid.action))}"
    if which == "trump_fixed":
        suit = convert.SUIT_FROM_PB[event.trump_fixed.suit]
        return f"  Trump is {suit_name(suit)}; {who(event.trump_fixed.maker)} made it."
    if which == "pickup":
        verb = "picks up" if event.pickup.took else "leaves"
        return f"  {who(event.pickup.dealer)} {verb} the upcard."
    if which == "discarded":
        return f"  {who(event.discarded.seat)} discarded "\
               f"{convert.card_from_pb(event.discarded.card)}."
    if which == "alone_decision":
        return f"  {who(event.alone_decision.seat)} goes alone!" \
            if event.alone_decision.alone else ""
    if which == "card_played":
        return f"  {who(event.card_played.seat)} plays " \
               f"{convert.card_from_pb(event.card_played.card)}"
    if which == "trick_won":
        return f"  -> {who(event.trick_won.seat)} won trick {event.trick_won.trick_number}."
    if which == "hand_end":
        return hand_end_text(event.hand_end, table)
    return ""


def hand_end_text(end: rpb.HandEnd, table: Table) -> str:
    result = end.result
    kind = pb.HandKind.Name(result.kind).removeprefix("HAND_KIND_").replace("_", " ").lower()
    if result.HasField("maker"):
        kind = f"{table.who(result.maker)}: {kind} ({result.makers_tricks} tricks)"
    return f"  Hand over, {kind}. Score: {table.scores(end.scores)}."
