"""Actions a player can take, interned like cards.

Each action has a stable integer ``id`` (for compact records) and a text form that parses
both ways: ``pass``, ``order``, ``take``, ``leave``, ``alone``, ``not-alone``,
``call h``, ``discard Js``, ``play Js``.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar

from harness.rules.cards import ALL_CARDS, Card, Suit


class ActionKind(enum.Enum):
    PASS = "pass"
    ORDER_UP = "order"  # round 1: order it up / assist / accept
    TAKE_UPCARD = "take"  # dealer, after being ordered up: take the upcard
    LEAVE_UPCARD = "leave"  # dealer, after being ordered up: leave it
    CALL = "call"  # round 2 (or the dealer naming trump on a Joker upcard): name a suit
    DISCARD = "discard"  # dealer's discard after taking, or the maker's dummy discards
    GO_ALONE = "alone"
    NOT_ALONE = "not-alone"
    PLAY = "play"


_SIMPLE = [ActionKind.PASS, ActionKind.ORDER_UP, ActionKind.TAKE_UPCARD,
           ActionKind.LEAVE_UPCARD, ActionKind.GO_ALONE, ActionKind.NOT_ALONE]


class Action:
    """One action. Build with the helpers (:func:`call`, :func:`play`, ...) or
    :meth:`parse`; ``Action(kind, card=..., suit=...)`` returns the interned instance."""

    __slots__ = ("_text", "card", "id", "kind", "suit")
    _interned: ClassVar[dict[tuple[ActionKind, Card | None, Suit | None], Action]] = {}
    _by_id: ClassVar[list[Action]] = []

    id: int
    kind: ActionKind
    card: Card | None
    suit: Suit | None
    _text: str

    def __new__(cls, kind: ActionKind, card: Card | None = None,
                suit: Suit | None = None) -> Action:
        try:
            return cls._interned[(kind, card, suit)]
        except KeyError:
            raise ValueError(f"no such action: {kind} card={card} suit={suit}") from None

    @classmethod
    def _make(cls, kind: ActionKind, card: Card | None = None,
              suit: Suit | None = None) -> Action:
        a = object.__new__(cls)
        object.__setattr__(a, "kind", kind)
        object.__setattr__(a, "card", card)
        object.__setattr__(a, "suit", suit)
        object.__setattr__(a, "id", len(cls._by_id))
        # Its text, once (every stored game lists its actions as text).
        text = (f"{kind.value} {card}" if card is not None
                else f"{kind.value} {suit.letter}" if suit is not None else kind.value)
        object.__setattr__(a, "_text", text)
        cls._by_id.append(a)
        cls._interned[(kind, card, suit)] = a
        return a

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Action is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Action, (self.kind, self.card, self.suit))

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Action({self})"

    @classmethod
    def from_id(cls, action_id: int) -> Action:
        if not 0 <= action_id < len(cls._by_id):
            raise ValueError(f"no action has id {action_id}")
        return cls._by_id[action_id]

    @classmethod
    def parse(cls, text: str) -> Action:
        parts = text.strip().split()
        if not parts:
            raise ValueError("empty action")
        try:
            kind = ActionKind(parts[0].lower())
        except ValueError:
            raise ValueError(f"not an action: {text!r}") from None
        if kind in (ActionKind.PLAY, ActionKind.DISCARD):
            if len(parts) != 2:
                raise ValueError(f"{kind.value} needs one card, e.g. '{kind.value} Js'")
            return Action(kind, card=Card.parse(parts[1]))
        if kind is ActionKind.CALL:
            if len(parts) != 2:
                raise ValueError("call needs a suit, e.g. 'call h'")
            return Action(kind, suit=Suit.parse(parts[1]))
        if len(parts) != 1:
            raise ValueError(f"{kind.value} takes no argument: {text!r}")
        return Action(kind)


for _k in _SIMPLE:
    Action._make(_k)
CALL_ACTIONS: tuple[Action, ...] = tuple(Action._make(ActionKind.CALL, suit=s) for s in Suit)
DISCARD_ACTIONS: tuple[Action, ...] = tuple(
    Action._make(ActionKind.DISCARD, card=c) for c in ALL_CARDS
)
PLAY_ACTIONS: tuple[Action, ...] = tuple(Action._make(ActionKind.PLAY, card=c) for c in ALL_CARDS)

PASS = Action(ActionKind.PASS)
ORDER_UP = Action(ActionKind.ORDER_UP)
TAKE_UPCARD = Action(ActionKind.TAKE_UPCARD)
LEAVE_UPCARD = Action(ActionKind.LEAVE_UPCARD)
GO_ALONE = Action(ActionKind.GO_ALONE)
NOT_ALONE = Action(ActionKind.NOT_ALONE)


def call(suit: Suit) -> Action:
    return CALL_ACTIONS[suit]


def play(card: Card) -> Action:
    return PLAY_ACTIONS[card.id]


def discard(card: Card) -> Action:
    return DISCARD_ACTIONS[card.id]
