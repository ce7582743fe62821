"""Translation between the protocol's protobuf messages and the rules engine's objects.

This is the only module that knows both sides: :mod:`harness.rules` stays free of
protobuf, and the referee and bots speak the engine's types everywhere else.

Domain -> protobuf: :func:`card_to_pb`, :func:`action_to_pb`, :func:`rules_to_pb`,
:func:`phase_to_decision_kind`, :func:`observation_to_pb`, :func:`hand_result_to_pb`,
:func:`event_to_pb`, :func:`hand_start_to_pb` and :func:`decision_request_to_pb`.

Protobuf -> domain: :func:`card_from_pb` and :func:`action_from_pb` (a malformed message
raises :class:`~harness.errors.ProtocolViolation` saying exactly what is wrong),
:func:`rules_from_pb` (invalid options raise :class:`~harness.errors.ConfigError` from
the :class:`~harness.rules.config.RulesConfig` constructor) and
:func:`decision_kind_to_phase`.

Speed. Everything the conversions need is computed once at import, as tables indexed by
``Card.id`` / ``Action.id`` or keyed by enum values. The per-decision messages
(:func:`observation_to_pb`, :func:`decision_request_to_pb`) and the frequent events
(plays, bids, tricks) are built as protobuf wire bytes from precomputed pieces and parsed
once by the C (upb) runtime, which is several times faster than setting fields from
Python (about 5 us for a mid-hand observation, 0.6 us for a play event); the tests check
them against messages built field by field. Field numbers come from the message
descriptors, never from literals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.protobuf.descriptor import Descriptor

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.errors import ProtocolViolation
from harness.rules import actions as A
from harness.rules.actions import Action, ActionKind
from harness.rules.cards import ALL_CARDS, Card, DeckKind, Rank, Suit
from harness.rules.config import Form, JokerUpcard, LonerLead, RulesConfig
from harness.rules.hand import Event, EventKind, Hand, Phase
from harness.rules.observation import Observation, TrickView
from harness.rules.scoring import HandKind, HandResult

__all__ = [
    "action_from_pb",
    "action_to_pb",
    "card_from_pb",
    "card_to_pb",
    "decision_kind_to_phase",
    "decision_request_to_pb",
    "event_to_pb",
    "hand_result_to_pb",
    "hand_start_to_pb",
    "observation_to_pb",
    "phase_to_decision_kind",
    "rules_from_pb",
    "rules_to_pb",
]

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

_NOT_DECISIONS = (Phase.HAND_OVER, Phase.GAME_OVER)
DECISION_KIND_TO_PB: Final[dict[Phase, pb.DecisionKind.ValueType]] = {
    p: (pb.DECISION_KIND_UNSPECIFIED if p in _NOT_DECISIONS
        else pb.DecisionKind.Value(f"DECISION_KIND_{p.name}"))
    for p in Phase}
DECISION_KIND_FROM_PB: Final[dict[int, Phase]] = {
    int(v): p for p, v in DECISION_KIND_TO_PB.items() if p not in _NOT_DECISIONS}

# --------------------------------------------------------------------------- card tables

# (rank, suit) of every card as protobuf enum values, indexed by Card.id.
_CARD_PB: Final[tuple[tuple[pb.Rank.ValueType, pb.Suit.ValueType], ...]] = tuple(
    (RANK_TO_PB[c.rank], pb.SUIT_UNSPECIFIED if c.suit is None else SUIT_TO_PB[c.suit])
    for c in ALL_CARDS)
# rank * 16 + suit -> Card, for every well-formed (rank, suit) pair.
_CARD_FROM_KEY: Final[dict[int, Card]] = {
    int(r) * 16 + int(s): c for c, (r, s) in zip(ALL_CARDS, _CARD_PB, strict=True)}

_CARD_KINDS = (ActionKind.PLAY, ActionKind.DISCARD)
_CARD_ACTIONS: Final[dict[ActionKind, tuple[Action, ...]]] = {
    ActionKind.PLAY: A.PLAY_ACTIONS, ActionKind.DISCARD: A.DISCARD_ACTIONS}
_SIMPLE_ACTIONS: Final[dict[ActionKind, Action]] = {
    a.kind: a for a in (A.PASS, A.ORDER_UP, A.TAKE_UPCARD, A.LEAVE_UPCARD, A.GO_ALONE,
                        A.NOT_ALONE)}
_ALL_ACTIONS: Final[tuple[Action, ...]] = (
    *_SIMPLE_ACTIONS.values(), *A.CALL_ACTIONS, *A.DISCARD_ACTIONS, *A.PLAY_ACTIONS)


def _enum_name(enum_type: Any, value: int) -> str:
    try:
        return str(enum_type.Name(value))
    except ValueError:
        return str(value)


# --------------------------------------------------------------------------- wire bytes
# Minimal protobuf wire-format encoding for the hot paths. Only three shapes occur:
# varint fields (wire type 0), length-delimited fields (wire type 2: sub-messages and
# packed repeated varints), each preceded by its key varint(field_number << 3 | type).

_VARINT, _LEN = 0, 2
_SMALL_VARINTS: Final[tuple[bytes, ...]] = tuple(bytes((i,)) for i in range(128))


def _varint(n: int) -> bytes:
    if 0 <= n < 128:
        return _SMALL_VARINTS[n]
    n &= (1 << 64) - 1  # negative int32/int64 values take ten bytes, as protobuf says
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(desc: Descriptor, field: str, wire_type: int) -> bytes:
    return _varint(desc.fields_by_name[field].number << 3 | wire_type)


def _len_field(key: bytes, body: bytes) -> bytes:
    return key + _varint(len(body)) + body


def _packed(key: bytes, values: Sequence[int]) -> bytes:
    """A packed repeated varint field; empty (absent) for no values."""
    if not values:
        return b""
    try:
        body = bytes(values)  # one byte per value when every value is 0..127
        if not body.isascii():
            raise ValueError
    except ValueError:
        body = b"".join([_varint(v) for v in values])
    return key + _varint(len(body)) + body


_D_CARD = pb.Card.DESCRIPTOR
_D_ACTION = pb.Action.DESCRIPTOR
_D_SEAT_CARD = pb.SeatCard.DESCRIPTOR
_D_SEAT_ACTION = pb.SeatAction.DESCRIPTOR
_D_TRICK = pb.Trick.DESCRIPTOR
_D_OBS = pb.Observation.DESCRIPTOR
_D_REQUEST = rpb.DecisionRequest.DESCRIPTOR

_MAX_SEATS = 4

# Card.id -> encoded Card body (zero values are omitted, as protobuf does).
_CARD_BYTES: Final[tuple[bytes, ...]] = tuple(
    _key(_D_CARD, "rank", _VARINT) + _varint(r)
    + (_key(_D_CARD, "suit", _VARINT) + _varint(s) if s else b"")
    for r, s in _CARD_PB)


def _action_bytes(action: Action) -> bytes:
    body = _key(_D_ACTION, "kind", _VARINT) + _varint(ACTION_KIND_TO_PB[action.kind])
    if action.card is not None:
        body += _len_field(_key(_D_ACTION, "card", _LEN), _CARD_BYTES[action.card.id])
    if action.suit is not None:
        body += _key(_D_ACTION, "suit", _VARINT) + _varint(SUIT_TO_PB[action.suit])
    return body


# Action.id -> encoded Action body (the ids of all actions are 0..len-1).
_ACTION_BYTES: Final[tuple[bytes, ...]] = tuple(
    _action_bytes(a) for a in sorted(_ALL_ACTIONS, key=lambda a: a.id))
assert [a.id for a in sorted(_ALL_ACTIONS, key=lambda a: a.id)] == list(
    range(len(_ALL_ACTIONS))), "Action ids are expected to be 0..n-1"


def _seat_bytes(desc: Descriptor, field: str, seat: int) -> bytes:
    return _key(desc, field, _VARINT) + _varint(seat) if seat else b""


def _cards_field(desc: Descriptor, field: str) -> tuple[bytes, ...]:
    """Card.id -> the card as one element of the Card field ``field`` of ``desc``."""
    key = _key(desc, field, _LEN)
    return tuple(_len_field(key, body) for body in _CARD_BYTES)


def _seat_cards_field(desc: Descriptor, field: str) -> tuple[tuple[bytes, ...], ...]:
    """[seat][Card.id] -> a SeatCard as one element of the field ``field`` of ``desc``."""
    key = _key(desc, field, _LEN)
    card_key = _key(_D_SEAT_CARD, "card", _LEN)
    return tuple(
        tuple(_len_field(key, _seat_bytes(_D_SEAT_CARD, "seat", seat)
                         + _len_field(card_key, body)) for body in _CARD_BYTES)
        for seat in range(_MAX_SEATS))


_OBS_HAND = _cards_field(_D_OBS, "hand")
_OBS_UPCARD = _cards_field(_D_OBS, "upcard")
_OBS_DISCARDS = _cards_field(_D_OBS, "discards")
_OBS_DUMMY = _cards_field(_D_OBS, "dummy")
_OBS_CURRENT_TRICK = _seat_cards_field(_D_OBS, "current_trick")
_TRICK_PLAYS = _seat_cards_field(_D_TRICK, "plays")
# [seat][Action.id] -> a SeatAction as one element of Observation.public_actions.
_OBS_PUBLIC_ACTIONS: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(_len_field(_key(_D_OBS, "public_actions", _LEN),
                     _seat_bytes(_D_SEAT_ACTION, "seat", seat)
                     + _len_field(_key(_D_SEAT_ACTION, "action", _LEN), body))
          for body in _ACTION_BYTES)
    for seat in range(_MAX_SEATS))
_REQUEST_LEGAL: Final[tuple[bytes, ...]] = tuple(
    _len_field(_key(_D_REQUEST, "legal_actions", _LEN), body) for body in _ACTION_BYTES)
_DECISION_BYTES: Final[dict[Phase, bytes]] = {
    p: _varint(v) for p, v in DECISION_KIND_TO_PB.items()}
_SUIT_BYTES: Final[tuple[bytes, ...]] = tuple(_varint(v) for v in SUIT_TO_PB)

# Game events that happen many times a hand, as GameEvent bodies without hand_number.
_D_EVENT = rpb.GameEvent.DESCRIPTOR
_K_EVENT_HAND_NUMBER = _key(_D_EVENT, "hand_number", _VARINT)
# [seat][Card.id] -> the card_played field.
_EVENT_PLAY: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(_len_field(_key(_D_EVENT, "card_played", _LEN),
                     _seat_bytes(rpb.CardPlayed.DESCRIPTOR, "seat", seat)
                     + _len_field(_key(rpb.CardPlayed.DESCRIPTOR, "card", _LEN), body))
          for body in _CARD_BYTES)
    for seat in range(_MAX_SEATS))
# [seat][Action.id] -> the bid field.
_EVENT_BID: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(_len_field(_key(_D_EVENT, "bid", _LEN),
                     _seat_bytes(rpb.Bid.DESCRIPTOR, "seat", seat)
                     + _len_field(_key(rpb.Bid.DESCRIPTOR, "action", _LEN), body))
          for body in _ACTION_BYTES)
    for seat in range(_MAX_SEATS))
# [seat][trick_number] -> the trick_won field.
_EVENT_TRICK: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(_len_field(_key(_D_EVENT, "trick_won", _LEN),
                     _seat_bytes(rpb.TrickWon.DESCRIPTOR, "seat", seat)
                     + _key(rpb.TrickWon.DESCRIPTOR, "trick_number", _VARINT) + _varint(number))
          for number in range(6))
    for seat in range(_MAX_SEATS))

_K_SEAT = _key(_D_OBS, "seat", _VARINT)
_K_HAND_NUMBER = _key(_D_OBS, "hand_number", _VARINT)
_K_DEALER = _key(_D_OBS, "dealer", _VARINT)
_K_DECISION = _key(_D_OBS, "decision", _VARINT)
_K_CURRENT = _key(_D_OBS, "current_seat", _VARINT)
_K_TURNED_DOWN = _key(_D_OBS, "upcard_turned_down", _VARINT)
_K_DEALER_TOOK = _key(_D_OBS, "dealer_took_upcard", _VARINT)
_K_TRUMP = _key(_D_OBS, "trump", _VARINT)
_K_MAKER = _key(_D_OBS, "maker", _VARINT)
_K_ALONE = _key(_D_OBS, "alone", _LEN)
_K_SITTING_OUT = _key(_D_OBS, "sitting_out", _LEN)
_K_TRICKS = _key(_D_OBS, "tricks", _LEN)
_K_TRICKS_WON = _key(_D_OBS, "tricks_won", _LEN)
_K_SCORES = _key(_D_OBS, "scores", _LEN)
_K_TRICK_LEADER = _key(_D_TRICK, "leader", _VARINT)
_K_TRICK_WINNER = _key(_D_TRICK, "winner", _VARINT)
_K_REQ_ID = _key(_D_REQUEST, "request_id", _VARINT)
_K_REQ_KIND = _key(_D_REQUEST, "kind", _VARINT)
_K_REQ_TIME_LEFT = _key(_D_REQUEST, "time_left_ms", _VARINT)
_K_REQ_BANK = _key(_D_REQUEST, "bank_ms", _VARINT)
_K_REQ_OBSERVATION = _key(_D_REQUEST, "observation", _LEN)
_TRUE, _FALSE = _varint(1), _varint(0)


def _observation_bytes(obs: Observation) -> bytes:
    v = _varint
    parts: list[bytes] = []
    add = parts.append
    if obs.seat:
        add(_K_SEAT + v(obs.seat))
    if obs.hand_number:
        add(_K_HAND_NUMBER + v(obs.hand_number))
    if obs.dealer:
        add(_K_DEALER + v(obs.dealer))
    if obs.phase not in _NOT_DECISIONS:
        add(_K_DECISION + _DECISION_BYTES[obs.phase])
    if obs.current is not None:
        add(_K_CURRENT + v(obs.current))
    hand = _OBS_HAND
    parts.extend([hand[c.id] for c in obs.hand])
    add(_OBS_UPCARD[obs.upcard.id])
    if obs.upcard_turned_down:
        add(_K_TURNED_DOWN + _TRUE)
    if obs.dealer_took_upcard is not None:
        add(_K_DEALER_TOOK + (_TRUE if obs.dealer_took_upcard else _FALSE))
    if obs.trump is not None:
        add(_K_TRUMP + _SUIT_BYTES[obs.trump])
    if obs.maker is not None:
        add(_K_MAKER + v(obs.maker))
    if obs.alone:
        add(_packed(_K_ALONE, obs.alone))
    if obs.sitting_out:
        add(_packed(_K_SITTING_OUT, obs.sitting_out))
    public = _OBS_PUBLIC_ACTIONS
    parts.extend([public[seat][a.id] for seat, a in obs.public_actions])
    discards = _OBS_DISCARDS
    parts.extend([discards[c.id] for c in obs.discards])
    dummy = _OBS_DUMMY
    parts.extend([dummy[c.id] for c in obs.dummy])
    plays = _TRICK_PLAYS
    for trick in obs.tricks:
        body = b"".join([
            _K_TRICK_LEADER + v(trick.leader) if trick.leader else b"",
            *[plays[seat][c.id] for seat, c in trick.plays],
            _K_TRICK_WINNER + v(trick.winner) if trick.winner else b"",
        ])
        add(_K_TRICKS + v(len(body)) + body)
    current = _OBS_CURRENT_TRICK
    parts.extend([current[seat][c.id] for seat, c in obs.current_trick])
    add(_packed(_K_TRICKS_WON, obs.tricks_won))
    add(_packed(_K_SCORES, obs.scores))
    return b"".join(parts)


# --------------------------------------------------------------------------- cards


def card_to_pb(card: Card) -> pb.Card:
    """The protobuf form of a card (the Joker: rank JOKER, suit UNSPECIFIED)."""
    return pb.Card.FromString(_CARD_BYTES[card.id])


def card_from_pb(msg: pb.Card) -> Card:
    """The card a message names. Raises ProtocolViolation for a rank or suit that is
    missing or unknown, or a Joker with a suit."""
    card = _CARD_FROM_KEY.get(msg.rank * 16 + msg.suit) if 0 <= msg.suit < 16 else None
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
                f"{_enum_name(pb.Suit, suit)}")
    return f"malformed card: a {_enum_name(pb.Rank, rank)} card needs a suit"


# --------------------------------------------------------------------------- actions


def action_to_pb(action: Action) -> pb.Action:
    """The protobuf form of an action."""
    return pb.Action.FromString(_ACTION_BYTES[action.id])


def action_from_pb(msg: pb.Action) -> Action:
    """The action a message names (the interned :class:`Action`). Raises
    ProtocolViolation for an unknown or missing kind, a missing card or suit, a card or
    suit on a kind that takes none, or a malformed card. Whether the action is *legal*
    is for the caller to check."""
    kind = ACTION_KIND_FROM_PB.get(msg.kind)
    if kind is None:
        if msg.kind == pb.ACTION_KIND_UNSPECIFIED:
            raise ProtocolViolation("malformed action: no kind (ACTION_KIND_UNSPECIFIED)")
        raise ProtocolViolation(f"malformed action: kind {msg.kind} is not an ActionKind "
                                f"value")
    has_card = msg.HasField("card")
    suit = msg.suit
    if kind in _CARD_KINDS:
        name = ACTION_KIND_TO_PB[kind]
        if not has_card:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)} needs a "
                                    f"card")
        if suit:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)} takes a "
                                    f"card, not a suit (got {_enum_name(pb.Suit, suit)})")
        try:
            card = card_from_pb(msg.card)
        except ProtocolViolation as e:
            raise ProtocolViolation(f"malformed action: {pb.ActionKind.Name(name)}: "
                                    f"{e}") from None
        return _CARD_ACTIONS[kind][card.id]
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
        what = "a card" if has_card else f"a suit ({_enum_name(pb.Suit, suit)})"
        raise ProtocolViolation(f"malformed action: "
                                f"{pb.ActionKind.Name(ACTION_KIND_TO_PB[kind])} takes no "
                                f"card and no suit, but has {what}")
    return _SIMPLE_ACTIONS[kind]


# --------------------------------------------------------------------------- rules


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
        raise ProtocolViolation(f"not a decision kind: {_enum_name(pb.DecisionKind, kind)}")
    return phase


def observation_to_pb(obs: Observation) -> pb.Observation:
    """The protobuf form of an observation. ``obs.legal_actions`` is not part of it:
    the legal actions travel in the DecisionRequest (see :func:`decision_request_to_pb`).
    """
    return pb.Observation.FromString(_observation_bytes(obs))


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


def decision_request_to_pb(request_id: int, obs: Observation, time_left_ms: int,
                           bank_ms: int) -> rpb.DecisionRequest:
    """A complete DecisionRequest for the observing seat, whose turn it must be: the
    kind, the legal actions and the observation all come from ``obs``."""
    if not obs.legal_actions:
        raise ValueError(f"seat {obs.seat} has no decision to make (phase "
                         f"{obs.phase.value}, turn {obs.current})")
    legal = _REQUEST_LEGAL
    body = _observation_bytes(obs)
    data = b"".join([
        _K_REQ_ID + _varint(request_id) if request_id else b"",
        _K_REQ_KIND + _DECISION_BYTES[obs.phase],
        *[legal[a.id] for a in obs.legal_actions],
        _K_REQ_TIME_LEFT + _varint(time_left_ms) if time_left_ms else b"",
        _K_REQ_BANK + _varint(bank_ms) if bank_ms else b"",
        _K_REQ_OBSERVATION + _varint(len(body)) + body,
    ])
    return rpb.DecisionRequest.FromString(data)


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


def _hand_number_bytes(hand_number: int) -> bytes:
    return _K_EVENT_HAND_NUMBER + _varint(hand_number) if hand_number else b""


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
    kind = event.kind
    GE = rpb.GameEvent
    if kind is EventKind.PLAY:
        return GE.FromString(_hand_number_bytes(hand_number)
                             + _EVENT_PLAY[_seat(event)][_one_card(event).id])
    if kind is EventKind.TRICK:
        if trick_number is None or not 1 <= trick_number <= 5:
            raise ValueError(f"a trick event needs trick_number=1..5 (the engine's event "
                             f"does not carry it); got {trick_number!r}")
        return GE.FromString(_hand_number_bytes(hand_number)
                             + _EVENT_TRICK[_seat(event)][trick_number])
    if kind is EventKind.BID:
        if event.action is None:
            raise ValueError("bid event without an action")
        return GE.FromString(_hand_number_bytes(hand_number)
                             + _EVENT_BID[_seat(event)][event.action.id])
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
