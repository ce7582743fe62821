"""What one seat may know (docs/rules.md section 7), built from a hand's state on demand.

An observation holds the seat's own cards, the upcard, every public action, the cards
played and the trick winners, the scores, its own discards, and the dummy only for the
maker who took it. It never holds another hand, the kitty under the upcard, another
player's discard, an unused dummy or a sitting-out hand.
"""

from __future__ import annotations

from typing import NamedTuple

from harness.rules.actions import Action
from harness.rules.cards import Card, Suit
from harness.rules.hand import Hand
from harness.rules.records import Phase, TrickView

__all__ = ["Observation", "observe"]


class Observation(NamedTuple):
    """Everything one seat may know at one moment (immutable; compare with ``==``)."""

    seat: int
    hand_number: int
    dealer: int
    phase: Phase
    current: int | None
    hand: tuple[Card, ...]
    upcard: Card
    upcard_turned_down: bool
    dealer_took_upcard: bool | None
    trump: Suit | None
    maker: int | None
    alone: tuple[int, ...]
    sitting_out: tuple[int, ...]
    public_actions: tuple[tuple[int, Action], ...]
    discards: tuple[Card, ...]
    dummy: tuple[Card, ...]
    tricks: tuple[TrickView, ...]
    current_trick: tuple[tuple[int, Card], ...]
    tricks_won: tuple[int, ...]
    scores: tuple[int, ...]
    legal_actions: tuple[Action, ...]


def observe(hand: Hand, seat: int, scores: tuple[int, ...], hand_number: int) -> Observation:
    """The observation of ``seat`` in the current state of ``hand``."""
    if not 0 <= seat < hand.n:
        raise ValueError(f"seat must be 0..{hand.n - 1}; got {seat}")
    blind = seat == hand.dealer and hand.blind_dealer
    current = hand.current
    return _new_tuple(Observation, (
        seat,
        hand_number,
        hand.dealer,
        hand.phase,
        current,
        () if blind else tuple(hand.hands[seat]),
        hand.upcard,
        hand.turned_down,
        hand.dealer_took,
        hand.trump,
        hand.maker,
        tuple(hand.alone),
        tuple(hand.sitting_out),
        hand.public_actions,
        tuple(hand.discards.get(seat, ())),
        tuple(hand.dummy or ()) if hand.dummy_taken and seat == hand.maker else (),
        tuple(hand.tricks),
        tuple(hand.trick),
        tuple(hand.tricks_won),
        scores,
        hand.legal_actions() if current == seat else (),
    ))


_new_tuple = tuple.__new__
