"""What one seat may know (RULES.md section 5), built from a hand's state on demand.

An observation holds the seat's own cards, the upcard, every public action, the cards
played and the trick winners, the scores, its own discards, and the dummy only for the
maker who took it. It never holds another hand, the kitty under the upcard, another
player's discard, an unused dummy or a sitting-out hand.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from harness.rules.actions import Action, ActionKind
from harness.rules.cards import Card, Suit

if TYPE_CHECKING:
    from harness.rules.hand import Hand, Phase


@dataclasses.dataclass(frozen=True, slots=True)
class TrickView:
    leader: int
    plays: tuple[tuple[int, Card], ...]
    winner: int


@dataclasses.dataclass(frozen=True, slots=True)
class Observation:
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
    from harness.rules.hand import Phase

    if not 0 <= seat < hand.n:
        raise ValueError(f"seat must be 0..{hand.n - 1}; got {seat}")
    blind = hand.phase is Phase.NAME_TRUMP and seat == hand.dealer
    own = () if blind else tuple(hand.hands[seat])
    discard_kind = ActionKind.DISCARD
    public = tuple((t.seat, t.action) for t in hand.transitions
                   if t.action.kind is not discard_kind)
    return Observation(
        seat=seat,
        hand_number=hand_number,
        dealer=hand.dealer,
        phase=hand.phase,
        current=hand.current,
        hand=own,
        upcard=hand.upcard,
        upcard_turned_down=hand.turned_down,
        dealer_took_upcard=hand.dealer_took,
        trump=hand.trump,
        maker=hand.maker,
        alone=tuple(hand.alone),
        sitting_out=tuple(hand.sitting_out),
        public_actions=public,
        discards=tuple(hand.discards.get(seat, ())),
        dummy=tuple(hand.dummy or ()) if hand.dummy_taken and seat == hand.maker else (),
        tricks=tuple(TrickView(leader, plays, winner) for leader, plays, winner in hand.tricks),
        current_trick=tuple(hand.trick),
        tricks_won=tuple(hand.tricks_won),
        scores=scores,
        legal_actions=tuple(hand.legal_actions()) if hand.current == seat else (),
    )
