"""Translation between the protocol's protobuf messages and the rules engine's objects.

This is the only module that knows both sides: :mod:`harness.rules` stays free of
protobuf, and the referee and bots speak the engine's types everywhere else.

Domain -> protobuf: :func:`card_to_pb`, :func:`action_to_pb`, :func:`rules_to_pb`,
:func:`phase_to_decision_kind`, :func:`observation_to_pb`, :func:`hand_result_to_pb`,
:func:`event_to_pb`, :func:`hand_start_to_pb` and :func:`decision_request_to_pb`.

Protobuf -> domain: :func:`card_from_pb` and :func:`action_from_pb` (a malformed message
raises :class:`~harness.errors.ProtocolViolation` saying exactly what is wrong),
:func:`observation_from_pb`, :func:`rules_from_pb` (invalid options raise
:class:`~harness.errors.ConfigError` from the :class:`~harness.rules.config.RulesConfig`
constructor) and :func:`decision_kind_to_phase`.

Speed. Everything the conversions need is computed once at import, as tables indexed by
``Card.id`` / ``Action.id`` or keyed by enum values. The per-decision messages
(:func:`observation_to_pb`, :func:`decision_request_to_pb`) and the frequent events
(plays, bids, tricks) are built as wire bytes by the private encoder
:mod:`harness.protocol._wire` and parsed once by the C (upb) runtime (about 5 us for a
mid-hand observation, 0.6 us for a play event).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import ProtocolViolation
from harness.protocol import _wire
from harness.protocol._tables import (
    ACTION_KIND_FROM_PB,
    ACTION_KIND_TO_PB,
    CARD_ACTIONS,
    CARD_FROM_KEY,
    CARD_KINDS,
    DECISION_KIND_FROM_PB,
    DECISION_KIND_TO_PB,
    DECK_FROM_PB,
    DECK_TO_PB,
    FORM_FROM_PB,
    FORM_TO_PB,
    HAND_KIND_TO_PB,
    JOKER_UPCARD_FROM_PB,
    JOKER_UPCARD_TO_PB,
    LONER_LEAD_FROM_PB,
    LONER_LEAD_TO_PB,
    RANK_TO_PB,
    SIMPLE_ACTIONS,
    SUIT_FROM_PB,
    SUIT_TO_PB,
    enum_name,
)
from harness.rules import actions as A
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import Card
from harness.rules.config import JokerUpcard, RulesConfig
from harness.rules.hand import Event, EventKind, Hand, Phase
from harness.rules.observation import Observation
from harness.rules.records import TrickView
from harness.rules.scoring import HandResult

__all__ = [
    "ACTION_KIND_FROM_PB",
    "ACTION_KIND_TO_PB",
    "DECISION_KIND_FROM_PB",
    "DECISION_KIND_TO_PB",
    "DECK_FROM_PB",
    "DECK_TO_PB",
    "FORM_FROM_PB",
    "FORM_TO_PB",
    "HAND_KIND_TO_PB",
    "JOKER_UPCARD_FROM_PB",
    "JOKER_UPCARD_TO_PB",
    "LONER_LEAD_FROM_PB",
    "LONER_LEAD_TO_PB",
    "RANK_TO_PB",
    "SUIT_FROM_PB",
    "SUIT_TO_PB",
    "action_from_pb",
    "action_to_pb",
    "card_from_pb",
    "card_to_pb",
    "check_decision",
    "decision_kind_to_phase",
    "decision_request_to_pb",
    "event_to_pb",
    "frequent_event_bytes",
    "hand_result_to_pb",
    "hand_start_to_pb",
    "observation_from_pb",
    "observation_to_pb",
    "phase_to_decision_kind",
    "rules_from_pb",
    "rules_to_pb",
]

# --------------------------------------------------------------------------- cards


def card_to_pb(card: Card) -> pb.Card:
    """The protobuf form of a card (the Joker: rank JOKER, suit UNSPECIFIED)."""
    return pb.Card.FromString(_wire.CARD_BYTES[card.id])


def card_from_pb(msg: pb.Card) -> Card:
    """The card a message names. Raises ProtocolViolation for a rank or suit that is
    missing or unknown, or a Joker with a suit."""
    card = CARD_FROM_KEY.get(msg.rank * 16 + msg.suit) if 0 <= msg.suit < 16 else None
    if card is not None:
        return card
    raise ProtocolViolation(_card_problem(msg))


def _card_problem(msg: pb.Card) -> str:
    rank, suit = msg.rank, msg.suit
    if rank == pb.RANK_UNSPECIFIED:
        return "malformed card: no rank (RANK_UNSPECIFIED)"
    if rank not in pb.Rank.values():
        return f"malformed card: rank {rank} is not a Rank value"
    if suit != pb.SUIT_UNSPECIFIED and suit not in SUIT_FROM_PB:
        return f"malformed card: suit {suit} is not a Suit value"
    if rank == pb.RANK_JOKER:
        return (f"malformed card: the Joker has no suit, but suit is "
                f"{enum_name(pb.Suit, suit)}")
    return f"malformed card: a {enum_name(pb.Rank, rank)} card needs a suit"


# --------------------------------------------------------------------------- actions


def action_to_pb(action: Action) -> pb.Action:
    """The protobuf form of an action."""
    return pb.Action.FromString(_wire.ACTION_BYTES[action.id])


def _action_key(msg: pb.Action) -> tuple[int, bool, int, int, int]:
    card = msg.card
    return (msg.kind, msg.HasField("card"), card.rank, card.suit, msg.suit)


def action_from_pb(msg: pb.Action) -> Action:
    """The action a message names (the interned :class:`Action`). Raises
    ProtocolViolation for an unknown or missing kind, a missing card or suit, a card or
    suit on a kind that takes none, or a malformed card. Whether the action is *legal*
    is for the caller to check.

    Every well-formed message is looked up by its fields in a table of the canonical
    encodings (:data:`_ACTIONS_BY_KEY`); anything else goes through the checks that say
    what is wrong with it."""
    action = _ACTIONS_BY_KEY.get(_action_key(msg))
    if action is not None:
        return action
    return _checked_action_from_pb(msg)


def _checked_action_from_pb(msg: pb.Action) -> Action:
    kind = ACTION_KIND_FROM_PB.get(msg.kind)
    if kind is None:
        if msg.kind == pb.ACTION_KIND_UNSPECIFIED:
            raise ProtocolViolation("malformed action: no kind (ACTION_KIND_UNSPECIFIED)")
        raise ProtocolViolation(f"malformed action: kind {msg.kind} is not an ActionKind "
                                f"value")
    has_card = msg.HasField("card")
    suit = msg.suit
    if kind in CARD_KINDS:
        name = ACTION_KIND_TO_PB[kind]
        if not has_card:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)} needs a "
                                    f"card")
        if suit:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)} takes a "
                                    f"card, not a suit (got {enum_name(pb.Suit, suit)})")
        try:
            card = card_from_pb(msg.card)
        except ProtocolViolation as e:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)}: "
                                    f"{e}") from None
        return CARD_ACTIONS[kind][card.id]
    if kind is ActionKind.CALL:
        if has_card:
            raise ProtocolViolation("malformed action: ACTION_KIND_CALL takes a suit, "
                                    "not a card")
        s = SUIT_FROM_PB.get(suit)
        if s is None:
            if suit == pb.SUIT_UNSPECIFIED:
                raise ProtocolViolation("malformed action: ACTION_KIND_CALL needs a suit")
            raise ProtocolViolation(f"malformed action: ACTION_KIND_CALL: suit {suit} is "
                                    f"not a Suit value")
        return A.CALL_ACTIONS[s]
    if has_card or suit:
        what = "a card" if has_card else f"a suit ({enum_name(pb.Suit, suit)})"
        raise ProtocolViolation(f"malformed action: "
                                f"{pb.ActionKind.Name(ACTION_KIND_TO_PB[kind])} takes no "
                                f"card and no suit, but has {what}")
    return SIMPLE_ACTIONS[kind]


# --------------------------------------------------------------------------- rules


# Each action's canonical message, by its fields (see action_from_pb).
_ACTIONS_BY_KEY: dict[tuple[int, bool, int, int, int], Action] = {
    _action_key(action_to_pb(a)): a for a in Action._by_id}


def rules_to_pb(config: RulesConfig) -> pb.RulesOptions:
    """Every option of ``config``, resolved (no field left to a default)."""
    return pb.RulesOptions(
        form=FORM_TO_PB[config.form],
        deck=DECK_TO_PB[config.deck],
        target=config.target,
        dealer_must_take=config.dealer_must_take,
        allow_turned_down_suit=config.allow_turned_down_suit,
        stick_the_dealer=config.stick_the_dealer,
        partner_may_go_alone=config.partner_may_go_alone,
        lone_defender=config.lone_defender,
        loner_lead=LONER_LEAD_TO_PB[config.loner_lead],
        joker_upcard=JOKER_UPCARD_TO_PB[config.joker_upcard],
    )


def _enum_option(value: int, table: dict[int, Any], enum_type: Any) -> Any:
    """A known value's engine member; an unknown one as text the RulesConfig constructor
    rejects with a ConfigError naming the option."""
    member = table.get(value)
    return member if member is not None else f"<{enum_type.DESCRIPTOR.name} value {value}>"


def rules_from_pb(msg: pb.RulesOptions) -> RulesConfig:
    """The RulesConfig a message describes. UNSPECIFIED enums, a target of 0 and unset
    optional fields take the defaults; invalid combinations raise ConfigError (from the
    RulesConfig constructor) naming the option."""
    kwargs: dict[str, Any] = {
        "dealer_must_take": msg.dealer_must_take,
        "allow_turned_down_suit": msg.allow_turned_down_suit,
        "stick_the_dealer": msg.stick_the_dealer,
    }
    if msg.form:
        kwargs["form"] = _enum_option(msg.form, FORM_FROM_PB, pb.Form)
    if msg.deck:
        kwargs["deck"] = _enum_option(msg.deck, DECK_FROM_PB, pb.Deck)
    if msg.target:
        kwargs["target"] = msg.target
    if msg.HasField("partner_may_go_alone"):
        kwargs["partner_may_go_alone"] = msg.partner_may_go_alone
    if msg.HasField("lone_defender"):
        kwargs["lone_defender"] = msg.lone_defender
    if msg.loner_lead:
        kwargs["loner_lead"] = _enum_option(msg.loner_lead, LONER_LEAD_FROM_PB, pb.LonerLead)
    if msg.joker_upcard:
        kwargs["joker_upcard"] = _enum_option(msg.joker_upcard, JOKER_UPCARD_FROM_PB,
                                              pb.JokerUpcard)
    return RulesConfig(**kwargs)


# --------------------------------------------------------------------------- decisions


def phase_to_decision_kind(phase: Phase) -> pb.DecisionKind.ValueType:
    """The DecisionKind of a phase; DECISION_KIND_UNSPECIFIED for HAND_OVER and
    GAME_OVER, where nobody decides."""
    return DECISION_KIND_TO_PB[phase]


def decision_kind_to_phase(kind: int) -> Phase:
    """The phase a DecisionKind stands for. Raises ProtocolViolation for
    DECISION_KIND_UNSPECIFIED or an unknown value."""
    phase = DECISION_KIND_FROM_PB.get(kind)
    if phase is None:
        raise ProtocolViolation(f"not a decision kind: {enum_name(pb.DecisionKind, kind)}")
    return phase


def observation_to_pb(obs: Observation) -> pb.Observation:
    """The protobuf form of an observation. ``obs.legal_actions`` is not part of it:
    the legal actions travel in the DecisionRequest (see :func:`decision_request_to_pb`).
    """
    return pb.Observation.FromString(_wire.observation_bytes(obs))


def observation_from_pb(msg: pb.Observation,
                        legal_actions: Sequence[pb.Action] = ()) -> Observation:
    """The engine's Observation from its protobuf form (what the Python SDK hands to bots).
    ``legal_actions`` come from the DecisionRequest. Raises ProtocolViolation if a card or
    action is malformed."""
    def cards(items: Sequence[pb.Card]) -> tuple[Card, ...]:
        return tuple(card_from_pb(c) for c in items)

    def seat_cards(items: Sequence[pb.SeatCard]) -> tuple[tuple[int, Card], ...]:
        return tuple((sc.seat, card_from_pb(sc.card)) for sc in items)

    return Observation(
        seat=msg.seat,
        hand_number=msg.hand_number,
        dealer=msg.dealer,
        phase=DECISION_KIND_FROM_PB.get(msg.decision, Phase.HAND_OVER),
        current=msg.current_seat if msg.HasField("current_seat") else None,
        hand=cards(msg.hand),
        upcard=card_from_pb(msg.upcard),
        upcard_turned_down=msg.upcard_turned_down,
        dealer_took_upcard=(msg.dealer_took_upcard if msg.HasField("dealer_took_upcard")
                            else None),
        trump=SUIT_FROM_PB.get(msg.trump),
        maker=msg.maker if msg.HasField("maker") else None,
        alone=tuple(msg.alone),
        sitting_out=tuple(msg.sitting_out),
        public_actions=tuple((sa.seat, action_from_pb(sa.action))
                             for sa in msg.public_actions),
        discards=cards(msg.discards),
        dummy=cards(msg.dummy),
        tricks=tuple(TrickView(t.leader, seat_cards(t.plays), t.winner) for t in msg.tricks),
        current_trick=seat_cards(msg.current_trick),
        tricks_won=tuple(msg.tricks_won),
        scores=tuple(msg.scores),
        legal_actions=tuple(action_from_pb(a) for a in legal_actions),
    )


def check_decision(obs: Observation) -> None:
    """Raise ValueError unless ``obs`` is of the seat whose turn it is (it has legal
    actions), as a DecisionRequest must be."""
    if not obs.legal_actions:
        raise ValueError(f"seat {obs.seat} has no decision to make (phase "
                         f"{obs.phase.value}, turn {obs.current})")


def decision_request_to_pb(request_id: int, obs: Observation, time_left_ms: int,
                           bank_ms: int) -> rpb.DecisionRequest:
    """A complete DecisionRequest for the observing seat, whose turn it must be: the
    kind, the legal actions and the observation all come from ``obs``."""
    check_decision(obs)
    return rpb.DecisionRequest.FromString(
        _wire.decision_request_bytes(request_id, obs, time_left_ms, bank_ms))


def hand_start_to_pb(hand: Hand, seat: int, hand_number: int,
                     scores: Sequence[int]) -> rpb.HandStart:
    """The HandStart of ``seat`` for ``hand`` (at any point of the hand: it uses the
    cards as dealt). The dealer of a hand whose upcard is the Joker under
    ``joker_upcard = dealer_names`` names trump blind and so gets no cards here."""
    blind = (seat == hand.dealer and hand.upcard.is_joker
             and hand.config.joker_upcard is JokerUpcard.DEALER_NAMES)
    return rpb.HandStart(
        hand_number=hand_number,
        dealer=hand.dealer,
        hand=() if blind else [card_to_pb(c) for c in hand.dealt[seat]],
        upcard=card_to_pb(hand.upcard),
        scores=scores,
    )


# --------------------------------------------------------------------------- results


def hand_result_to_pb(result: HandResult) -> pb.HandResult:
    """The protobuf form of a hand's result."""
    return pb.HandResult(
        kind=HAND_KIND_TO_PB[result.kind],
        points=result.points,
        maker=result.maker,
        makers_tricks=result.makers_tricks,
        maker_alone=result.maker_alone,
        lone_defender=result.defender_alone,
        tricks_won=result.tricks_won,
    )


# --------------------------------------------------------------------------- events


def _seat(event: Event) -> int:
    if event.seat is None:
        raise ValueError(f"{event.kind.value} event without a seat")
    return event.seat


def _one_card(event: Event) -> Card:
    if len(event.cards) != 1:
        raise ValueError(f"{event.kind.value} event must hold one card; got "
                         f"{len(event.cards)}")
    return event.cards[0]


def frequent_event_bytes(hand_number: int, event: Event,
                         trick_number: int | None) -> bytes | None:
    """The GameEvent of a play, trick or bid (the events of every decision) as wire
    bytes; None for any other kind. Raises as :func:`event_to_pb` does."""
    kind = event.kind
    if kind is EventKind.PLAY:
        return _wire.play_event_bytes(hand_number, _seat(event), _one_card(event))
    if kind is EventKind.TRICK:
        if trick_number is None or not 1 <= trick_number <= 5:
            raise ValueError(f"a trick event needs trick_number=1..5 (the engine's event "
                             f"does not carry it); got {trick_number!r}")
        return _wire.trick_event_bytes(hand_number, _seat(event), trick_number)
    if kind is EventKind.BID:
        if event.action is None:
            raise ValueError("bid event without an action")
        return _wire.bid_event_bytes(hand_number, _seat(event), event.action)
    return None


def event_to_pb(hand_number: int, event: Event, *, trick_number: int | None = None,
                scores: Sequence[int] | None = None) -> rpb.GameEvent | None:
    """The GameEvent of an engine event, or None for DEAL (the referee sends a HandStart
    for that; see :func:`hand_start_to_pb`). Who may see it (``event.to``) is the
    caller's business.

    Two kinds need what the engine's event does not hold: TRICK needs ``trick_number``
    (1..5, the count of TRICK events of the hand so far, this one included) and HAND_END
    needs ``scores`` (the game score per team after the hand, i.e. ``Game.scores`` once
    the hand is scored). Either missing raises ValueError, as does an event that lacks
    what its kind needs."""
    data = frequent_event_bytes(hand_number, event, trick_number)
    if data is not None:
        return rpb.GameEvent.FromString(data)
    kind = event.kind
    GE = rpb.GameEvent
    if kind is EventKind.DEAL:
        return None
    if kind is EventKind.TRUMP:
        if event.suit is None:
            raise ValueError("trump event without a suit")
        return GE(hand_number=hand_number,
                  trump_fixed=rpb.TrumpFixed(suit=SUIT_TO_PB[event.suit], maker=_seat(event)))
    if kind is EventKind.PICKUP:
        return GE(hand_number=hand_number,
                  pickup=rpb.Pickup(dealer=_seat(event), took=bool(event.flag)))
    if kind is EventKind.ALONE:
        return GE(hand_number=hand_number,
                  alone_decision=rpb.AloneDecision(seat=_seat(event), alone=bool(event.flag)))
    if kind is EventKind.DISCARD:
        return GE(hand_number=hand_number,
                  discarded=rpb.Discarded(seat=_seat(event),
                                          card=card_to_pb(_one_card(event))))
    if kind is EventKind.DUMMY:
        return GE(hand_number=hand_number, dummy_cards=rpb.DummyCards(
            seat=_seat(event), cards=[card_to_pb(c) for c in event.cards]))
    if kind is EventKind.HAND_END:
        if event.result is None:
            raise ValueError("hand_end event without a result")
        if scores is None:
            raise ValueError("a hand_end event needs scores= (the game score per team "
                             "after the hand; the engine's event does not carry it)")
        return GE(hand_number=hand_number, hand_end=rpb.HandEnd(
            result=hand_result_to_pb(event.result), scores=scores))
    raise ValueError(f"unknown event kind {kind!r}")
