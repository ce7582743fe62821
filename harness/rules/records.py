"""What a hand records: its phases, each applied action (:class:`Transition`), each
consequence (:class:`Event`, tagged with who may see it) and each completed trick
(:class:`TrickView`).

Records that depend only on a seat and a card (or a yes/no) are immutable, so the most
frequent ones are built once here and shared: the hand's hot path appends them without
allocating.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from harness.rules import actions as A
from harness.rules.actions import Action
from harness.rules.cards import ALL_CARDS, Card, Suit
from harness.rules.scoring import HandResult


class Phase(enum.Enum):
    """What kind of decision a hand is waiting for."""

    NAME_TRUMP = "name_trump"  # dealer names trump on a turned-up Joker (dealer_names)
    BID_ROUND_1 = "bid_round_1"  # pass or order it up
    DEALER_PICKUP = "dealer_pickup"  # ordered up by another player: take or leave
    DEALER_DISCARD = "dealer_discard"  # dealer took the upcard: discard one dealt card
    BID_ROUND_2 = "bid_round_2"  # pass or name a suit
    GO_ALONE = "go_alone"  # alone or not
    DUMMY_DISCARD = "dummy_discard"  # cutthroat maker with ten cards discards down to five
    PLAY = "play"
    HAND_OVER = "hand_over"
    GAME_OVER = "game_over"  # used by Game, never by a Hand


class TrickView(NamedTuple):
    """A completed trick: who led, (seat, card) in play order, and who won it."""

    leader: int
    plays: tuple[tuple[int, Card], ...]
    winner: int


class Transition(NamedTuple):
    """One applied action: who, what, and in which phase."""

    seat: int
    action: Action
    phase: Phase


class EventKind(enum.Enum):
    DEAL = "deal"  # private: the seat's own five cards (and the public upcard)
    BID = "bid"  # public: pass / order / call in either round, or naming on a Joker
    TRUMP = "trump"  # public: trump fixed, by whom
    PICKUP = "pickup"  # public: the dealer takes (or leaves) the upcard
    DISCARD = "discard"  # private to the discarder
    DUMMY = "dummy"  # private to the maker: the dummy's five cards
    ALONE = "alone"  # public: a going-alone decision
    PLAY = "play"  # public: a card played
    TRICK = "trick"  # public: the winner of a trick
    HAND_END = "hand_end"  # public: the hand's result


class Event(NamedTuple):
    """Something that happened. ``to`` is the one seat that may see it, or ``None`` for
    every seat. ``cards`` holds the cards involved; ``suit`` a suit; ``flag`` a yes/no
    (alone or not, took or left); ``result`` the hand result on ``HAND_END``."""

    kind: EventKind
    seat: int | None
    to: int | None = None
    cards: tuple[Card, ...] = ()
    suit: Suit | None = None
    flag: bool | None = None
    action: Action | None = None
    result: HandResult | None = None


# NamedTuple's generated __new__ is a Python function; the hot path builds the tuples
# directly (same fields, same order, same type).
new_tuple = tuple.__new__


def event(kind: EventKind, seat: int | None, to: int | None = None,
          cards: tuple[Card, ...] = (), suit: Suit | None = None, flag: bool | None = None,
          action: Action | None = None, result: HandResult | None = None) -> Event:
    return new_tuple(Event, (kind, seat, to, cards, suit, flag, action, result))


def transition(seat: int, action: Action, phase: Phase) -> Transition:
    return new_tuple(Transition, (seat, action, phase))


# Shared records, indexed [seat][card id] or [seat][yes/no].
_SEATS = range(4)
PLAY_EVENTS = [[event(EventKind.PLAY, s, cards=(c,)) for c in ALL_CARDS] for s in _SEATS]
TRICK_EVENTS = [event(EventKind.TRICK, s) for s in _SEATS]
ROUND_1_EVENTS = [[event(EventKind.BID, s, action=a) for a in (A.PASS, A.ORDER_UP)]
                  for s in _SEATS]
ALONE_EVENTS = [[event(EventKind.ALONE, s, flag=f) for f in (False, True)] for s in _SEATS]
PLAY_TRANSITIONS = [[Transition(s, A.PLAY_ACTIONS[c.id], Phase.PLAY) for c in ALL_CARDS]
                    for s in _SEATS]
ALONE_TRANSITIONS = [[Transition(s, a, Phase.GO_ALONE) for a in (A.NOT_ALONE, A.GO_ALONE)]
                     for s in _SEATS]
ROUND_1_TRANSITIONS = [[Transition(s, a, Phase.BID_ROUND_1) for a in (A.PASS, A.ORDER_UP)]
                       for s in _SEATS]
