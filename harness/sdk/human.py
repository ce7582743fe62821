"""A human seat: a person plays one seat of a game from the terminal.

:class:`HumanBot` is an ordinary SDK bot (:class:`harness.sdk.Bot`) whose decisions come
from the keyboard. It prints the events of the game as they reach its seat (bids, trump,
every card played, trick and hand results), and at each decision the table (dealer,
upcard, trump, score, the trick so far) and the hand sorted by suit with the trumps
marked, then the legal choices, numbered. A wrong answer is explained and asked again; it
never reaches the referee, so a person cannot forfeit by a typo. ``q`` leaves the game
(:class:`HumanQuit`).

``euchre-harness play`` (:mod:`harness.cli.play`) seats it against bots.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from harness.errors import HarnessError, HumanQuit
from harness.protocol import convert, pb, rpb
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import EFFECTIVE_SUIT, NO_TRUMP_INDEX, TRUMP_POWER, Card, Suit
from harness.rules.config import Form, RulesConfig
from harness.rules.hand import Phase
from harness.rules.observation import Observation
from harness.sdk import Bot

TRUMP_MARK = "*"
WIDTH = 78  # the screen's line length
QUIT_WORDS = frozenset({"q", "quit", "exit"})


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

    def who(self, seat: int, *, start: bool = True) -> str:
        if seat == self.me:
            return "You" if start else "you"
        return self.places[seat]

    def does(self, seat: int, verb: str, rest: str = "") -> str:
        """``West passes`` / ``You pass``: the verb agrees with the subject."""
        if seat != self.me:
            first, _, more = verb.partition(" ")
            first += "es" if first.endswith(("s", "o")) else "s"
            verb = f"{first} {more}".rstrip()
        return f"{self.who(seat)} {verb}{' ' + rest if rest else ''}"

    def seating(self) -> str:
        parts = []
        for seat in self.order()[1:]:
            role = " (your partner)" if self.partner(seat) else ""
            parts.append(f"{self.places[seat]}: {self.names[seat]}{role}")
        return "; ".join(parts)

    def order(self) -> list[int]:
        """The seats in play order, starting with the person's."""
        n = self.rules.players
        return [(self.me + k) % n for k in range(n)]

    def partner(self, seat: int) -> bool:
        return self.rules.form is Form.FOUR_HANDED and seat == (self.me + 2) % 4

    def scores(self, scores: Sequence[int]) -> str:
        """Points (or anything counted per side): per partnership four-handed, else per
        seat."""
        if self.rules.form is Form.FOUR_HANDED:
            us = self.me % 2
            return f"you & North {scores[us]}, West & East {scores[1 - us]}"
        return ", ".join(f"{self.who(s)} {scores[s]}" for s in self.order())

    def tricks(self, tricks_won: Sequence[int]) -> str:
        if self.rules.form is Form.FOUR_HANDED:
            return self.scores([tricks_won[0] + tricks_won[2], tricks_won[1] + tricks_won[3]])
        return self.scores(tricks_won)


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
        return "(not seen yet)"
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


def bid_text(action: Action) -> tuple[str, str]:
    """A bid as a verb and the rest of the phrase (``("call", "hearts")``)."""
    kind = action.kind
    if kind is ActionKind.CALL:
        assert action.suit is not None
        return "call", suit_name(action.suit)
    return {ActionKind.PASS: ("pass", ""), ActionKind.ORDER_UP: ("order", "it up"),
            ActionKind.TAKE_UPCARD: ("take", "the upcard"),
            ActionKind.LEAVE_UPCARD: ("leave", "the upcard")}.get(kind, (str(action), ""))


def in_hand_order(legal: Sequence[Action], trump: Suit | None) -> list[Action]:
    """Card choices in the order the hand is shown; other choices as they come."""
    cards = [a.card for a in legal if a.card is not None]
    if len(cards) != len(legal):
        return list(legal)
    shown = [c for group in sorted_hand(cards, trump) for c in group]
    position = {a: shown.index(a.card) for a in legal if a.card is not None}
    return sorted(legal, key=position.__getitem__)


def numbered(choices: Sequence[str], head: str = "Your choices:") -> str:
    """``Your choices:  1) pass   2) order up Kc``, wrapped between choices."""
    lines = [head]
    for number, choice in enumerate(choices, 1):
        item = f"{number}) {choice}"
        if len(lines[-1]) + 3 + len(item) > WIDTH and lines[-1] != head:
            lines.append(" " * (len(head) - 1))
        lines[-1] += ("  " if lines[-1] == head else "   ") + item
    return "\n".join(lines)


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
        self.trump: Suit | None = None  # the trump of the hand on the screen
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
        self.say(f"Cards are rank and suit (c d h s): Ah, Td = ten, JK = Joker; "
                 f"{TRUMP_MARK} marks a trump.")
        self.say("Answer with the number of a choice (or q to quit the game).")

    def on_event(self, event: rpb.GameEvent) -> None:
        # Events come in order before each decision (or the game's end); they are shown
        # together with the state they lead to.
        self.pending.append(event)

    def on_game_over(self, message: rpb.GameOver) -> None:
        self.show_events(None)
        table = self._table()
        self.say()
        self.say("=" * WIDTH)
        if message.termination != rpb.GAME_TERMINATION_NORMAL:
            place = f"The game ended early: {message.detail}"
        elif table.rules.form is Form.CUTTHROAT:
            place = f"You finish {('first', 'second', 'third')[message.your_place - 1]}."
        else:
            place = "You win!" if message.your_place == 1 else "You lose."
        self.say(f"Game over. {place}  Final score: {table.scores(message.scores)}")
        self.over.set()

    # ------------------------------------------------------------------ decisions
    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        self.show_events(obs)
        self.show_table(obs)
        legal = in_hand_order(legal, obs.trump)
        choices = [action_text(a, obs) for a in legal]
        self.say(numbered(choices))
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
            line += f"· dealer {table.who(obs.dealer)} · upcard {obs.upcard} "
        self.say(line + "-" * max(0, WIDTH - len(line)))
        self.shown_hand = number
        self.trump = None

    def show_events(self, obs: Observation | None) -> None:
        table = self._table()
        for event in self.pending:
            if event.hand_number != self.shown_hand:
                self.show_hand_header(event.hand_number, obs)
            if event.WhichOneof("event") == "trump_fixed":
                self.trump = convert.SUIT_FROM_PB[event.trump_fixed.suit]
            line = event_text(event, table, self.trump)
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
            maker = ("" if obs.maker is None
                     else f", made by {table.who(obs.maker, start=False)}")
            alone = "".join(f", {table.who(s, start=False)} alone" for s in obs.alone)
            state = f"Trump {suit_name(obs.trump)}{maker}{alone}"
        self.say(f"  Dealer {table.who(obs.dealer)} · {state} · "
                 f"score {table.scores(obs.scores)}")
        if obs.tricks or obs.current_trick:
            self.say(f"  Tricks won: {table.tricks(obs.tricks_won)}")
        if obs.current_trick:
            plays = ", ".join(f"{table.who(s)} {card_text(c, obs.trump)}"
                              for s, c in obs.current_trick)
            self.say(f"  This trick: {plays}")
        if obs.dummy:
            self.say(f"  The dummy you took: {hand_text(obs.dummy, obs.trump)}")
        self.say(f"  Your hand:  {hand_text(obs.hand, obs.trump)}")
        self.say(f"  {phase_hint(obs)}")


def phase_hint(obs: Observation) -> str:
    """What the decision is about, in one line."""
    phase = obs.phase
    if phase is Phase.PLAY:
        return "Your lead." if not obs.current_trick else "Your turn: follow suit if you can."
    return {
        Phase.NAME_TRUMP: "The upcard is the Joker and you deal: name trump.",
        Phase.BID_ROUND_1: f"Bidding, round 1: order up {obs.upcard} (its suit becomes "
                           f"trump and the dealer takes it) or pass.",
        Phase.DEALER_PICKUP: f"You are ordered up: take {obs.upcard} or leave it.",
        Phase.DEALER_DISCARD: f"You take {obs.upcard}: discard one of the cards above.",
        Phase.BID_ROUND_2: "Bidding, round 2: name trump or pass.",
        Phase.GO_ALONE: "Play this hand alone?",
        Phase.DUMMY_DISCARD: "You took the dummy: discard down to five cards.",
    }.get(phase, "")


def event_text(event: rpb.GameEvent, table: Table, trump: Suit | None) -> str:
    """One line for one event ("" for an event not worth a line). ``trump`` is the
    hand's trump once it is fixed (to mark the trumps played)."""
    which = event.WhichOneof("event")
    does = table.does
    if which == "bid":
        return "  " + does(event.bid.seat, *bid_text(convert.action_from_pb(event.bid.action)))
    if which == "trump_fixed":
        fixed = event.trump_fixed
        return (f"  Trump is {suit_name(convert.SUIT_FROM_PB[fixed.suit])}, made by "
                f"{table.who(fixed.maker, start=False)}")
    if which == "pickup":
        return "  " + does(event.pickup.dealer, "pick up" if event.pickup.took else "leave",
                           "the upcard")
    if which == "discarded":
        card = card_text(convert.card_from_pb(event.discarded.card), trump)
        return "  " + does(event.discarded.seat, "discard", card)
    if which == "alone_decision":
        return "  " + does(event.alone_decision.seat, "go", "alone!") \
            if event.alone_decision.alone else ""
    if which == "card_played":
        card = card_text(convert.card_from_pb(event.card_played.card), trump)
        return "  " + does(event.card_played.seat, "play", card)
    if which == "trick_won":
        return (f"  -> {table.who(event.trick_won.seat)} won trick "
                f"{event.trick_won.trick_number}.\n")
    if which == "hand_end":
        return hand_end_text(event.hand_end, table)
    return ""


def hand_end_text(end: rpb.HandEnd, table: Table) -> str:
    result = end.result
    kind = pb.HandKind.Name(result.kind).removeprefix("HAND_KIND_").replace("_", " ").lower()
    if result.HasField("maker"):
        kind = (f"{kind} (makers {table.who(result.maker, start=False)}, "
                f"{result.makers_tricks} tricks)")
    return f"  Hand over: {kind}. Score: {table.scores(end.scores)}."
