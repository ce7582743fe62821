"""The enum and card tables shared by :mod:`harness.protocol.convert` and the wire
encoder (:mod:`harness.protocol._wire`). Internal to :mod:`harness.protocol`: importers
use the names :mod:`~harness.protocol.convert` re-exports."""

from __future__ import annotations

from typing import Any, Final

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness.rules import actions as A
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import ALL_CARDS, Card, DeckKind, Rank, Suit
from harness.rules.config import Form, JokerUpcard, LonerLead
from harness.rules.hand import Phase
from harness.rules.scoring import HandKind

# --------------------------------------------------------------------------- enum tables
# Built by name (engine member NAME <-> protobuf PREFIX_NAME), so a renamed value on
# either side fails at import instead of converting wrongly.

SUIT_TO_PB: Final[tuple[pb.Suit.ValueType, ...]] = tuple(
    pb.Suit.Value(f"SUIT_{s.name}") for s in Suit)  # indexed by Suit (an IntEnum)
SUIT_FROM_PB: Final[dict[int, Suit]] = {int(SUIT_TO_PB[s]): s for s in Suit}
RANK_TO_PB: Final[dict[Rank, pb.Rank.ValueType]] = {
    r: pb.Rank.Value(f"RANK_{r.name}") for r in Rank}
ACTION_KIND_TO_PB: Final[dict[ActionKind, pb.ActionKind.ValueType]] = {
    k: pb.ActionKind.Value(f"ACTION_KIND_{k.name}") for k in ActionKind}
ACTION_KIND_FROM_PB: Final[dict[int, ActionKind]] = {
    int(v): k for k, v in ACTION_KIND_TO_PB.items()}
FORM_TO_PB: Final[dict[Form, pb.Form.ValueType]] = {
    f: pb.Form.Value(f"FORM_{f.name}") for f in Form}
FORM_FROM_PB: Final[dict[int, Form]] = {int(v): k for k, v in FORM_TO_PB.items()}
DECK_TO_PB: Final[dict[DeckKind, pb.Deck.ValueType]] = {
    d: pb.Deck.Value(f"DECK_{d.value}") for d in DeckKind}
DECK_FROM_PB: Final[dict[int, DeckKind]] = {int(v): k for k, v in DECK_TO_PB.items()}
LONER_LEAD_TO_PB: Final[dict[LonerLead, pb.LonerLead.ValueType]] = {
    x: pb.LonerLead.Value(f"LONER_LEAD_{x.name}") for x in LonerLead}
LONER_LEAD_FROM_PB: Final[dict[int, LonerLead]] = {
    int(v): k for k, v in LONER_LEAD_TO_PB.items()}
JOKER_UPCARD_TO_PB: Final[dict[JokerUpcard, pb.JokerUpcard.ValueType]] = {
    x: pb.JokerUpcard.Value(f"JOKER_UPCARD_{x.name}") for x in JokerUpcard}
JOKER_UPCARD_FROM_PB: Final[dict[int, JokerUpcard]] = {
    int(v): k for k, v in JOKER_UPCARD_TO_PB.items()}
HAND_KIND_TO_PB: Final[dict[HandKind, pb.HandKind.ValueType]] = {
    k: pb.HandKind.Value(f"HAND_KIND_{k.name}") for k in HandKind}

NOT_DECISIONS = (Phase.HAND_OVER, Phase.GAME_OVER)
DECISION_KIND_TO_PB: Final[dict[Phase, pb.DecisionKind.ValueType]] = {
    p: (pb.DECISION_KIND_UNSPECIFIED if p in NOT_DECISIONS
        else pb.DecisionKind.Value(f"DECISION_KIND_{p.name}"))
    for p in Phase}
DECISION_KIND_FROM_PB: Final[dict[int, Phase]] = {
    int(v): p for p, v in DECISION_KIND_TO_PB.items() if p not in NOT_DECISIONS}

# --------------------------------------------------------------------------- card tables

# (rank, suit) of every card as protobuf enum values, indexed by Card.id.
CARD_PB: Final[tuple[tuple[pb.Rank.ValueType, pb.Suit.ValueType], ...]] = tuple(
    (RANK_TO_PB[c.rank], pb.SUIT_UNSPECIFIED if c.suit is None else SUIT_TO_PB[c.suit])
    for c in ALL_CARDS)
# rank * 16 + suit -> Card, for every well-formed (rank, suit) pair.
CARD_FROM_KEY: Final[dict[int, Card]] = {
    int(r) * 16 + int(s): c for c, (r, s) in zip(ALL_CARDS, CARD_PB, strict=True)}

CARD_KINDS = (ActionKind.PLAY, ActionKind.DISCARD)
CARD_ACTIONS: Final[dict[ActionKind, tuple[Action, ...]]] = {
    ActionKind.PLAY: A.PLAY_ACTIONS, ActionKind.DISCARD: A.DISCARD_ACTIONS}
SIMPLE_ACTIONS: Final[dict[ActionKind, Action]] = {
    a.kind: a for a in (A.PASS, A.ORDER_UP, A.TAKE_UPCARD, A.LEAVE_UPCARD, A.GO_ALONE,
                        A.NOT_ALONE)}
ALL_ACTIONS: Final[tuple[Action, ...]] = (
    *SIMPLE_ACTIONS.values(), *A.CALL_ACTIONS, *A.DISCARD_ACTIONS, *A.PLAY_ACTIONS)


def enum_name(enum_type: Any, value: int) -> str:
    try:
        return str(enum_type.Name(value))
    except ValueError:
        return str(value)
