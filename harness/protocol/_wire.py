"""The hand-written protobuf wire encoder behind the hot paths of
:mod:`harness.protocol.convert` (internal to :mod:`harness.protocol`).

The per-decision messages (observations, decision requests) and the frequent events
(plays, bids, tricks) are built as protobuf wire bytes from pieces precomputed at import
and parsed once by the C (upb) runtime, which is several times faster than setting fields
from Python. Field numbers come from the message descriptors, never from literals; the
tests check the output against messages built field by field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.protobuf.descriptor import Descriptor

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.protocol._tables import (
    ACTION_KIND_TO_PB,
    ALL_ACTIONS,
    CARD_PB,
    DECISION_KIND_TO_PB,
    NOT_DECISIONS,
    SUIT_TO_PB,
)
from harness.rules.actions import Action
from harness.rules.cards import Card
from harness.rules.hand import Phase
from harness.rules.observation import Observation

# --------------------------------------------------------------------------- wire bytes
# Minimal protobuf wire-format encoding for the hot paths. Only three shapes occur:
# varint fields (wire type 0), length-delimited fields (wire type 2: sub-messages and
# packed repeated varints), each preceded by its key varint(field_number << 3 | type).

_VARINT, _LEN = 0, 2
_SMALL_VARINTS: Final[tuple[bytes, ...]] = tuple(bytes((i,)) for i in range(128))


def _varint(n: int) -> bytes:
    if 0 <= n < 128:
        return _SMALL_VARINTS[n]
    if 0 < n < 16384:  # two bytes: request ids, times in ms, most lengths
        return bytes(((n & 0x7F) | 0x80, n >> 7))
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
    except ValueError:
        body = b""
    if len(body) != len(values) or not body.isascii():
        body = b"".join([_varint(v) for v in values])
    n = len(body)
    return key + (_SMALL_VARINTS[n] if n < 128 else _varint(n)) + body


_D_CARD = pb.Card.DESCRIPTOR
_D_ACTION = pb.Action.DESCRIPTOR
_D_SEAT_CARD = pb.SeatCard.DESCRIPTOR
_D_SEAT_ACTION = pb.SeatAction.DESCRIPTOR
_D_TRICK = pb.Trick.DESCRIPTOR
_D_OBS = pb.Observation.DESCRIPTOR
_D_REQUEST = rpb.DecisionRequest.DESCRIPTOR

_MAX_SEATS = 4

# Card.id -> encoded Card body (zero values are omitted, as protobuf does).
CARD_BYTES: Final[tuple[bytes, ...]] = tuple(
    _key(_D_CARD, "rank", _VARINT) + _varint(r)
    + (_key(_D_CARD, "suit", _VARINT) + _varint(s) if s else b"")
    for r, s in CARD_PB)


def _action_bytes(action: Action) -> bytes:
    body = _key(_D_ACTION, "kind", _VARINT) + _varint(ACTION_KIND_TO_PB[action.kind])
    if action.card is not None:
        body += _len_field(_key(_D_ACTION, "card", _LEN), CARD_BYTES[action.card.id])
    if action.suit is not None:
        body += _key(_D_ACTION, "suit", _VARINT) + _varint(SUIT_TO_PB[action.suit])
    return body


# Action.id -> encoded Action body (the ids of all actions are 0..len-1).
ACTION_BYTES: Final[tuple[bytes, ...]] = tuple(
    _action_bytes(a) for a in sorted(ALL_ACTIONS, key=lambda a: a.id))
assert [a.id for a in sorted(ALL_ACTIONS, key=lambda a: a.id)] == list(
    range(len(ALL_ACTIONS))), "Action ids are expected to be 0..n-1"


def _seat_bytes(desc: Descriptor, field: str, seat: int) -> bytes:
    return _key(desc, field, _VARINT) + _varint(seat) if seat else b""


def _cards_field(desc: Descriptor, field: str) -> tuple[bytes, ...]:
    """Card.id -> the card as one element of the Card field ``field`` of ``desc``."""
    key = _key(desc, field, _LEN)
    return tuple(_len_field(key, body) for body in CARD_BYTES)


def _seat_cards_field(desc: Descriptor, field: str) -> tuple[tuple[bytes, ...], ...]:
    """[seat][Card.id] -> a SeatCard as one element of the field ``field`` of ``desc``."""
    key = _key(desc, field, _LEN)
    card_key = _key(_D_SEAT_CARD, "card", _LEN)
    return tuple(
        tuple(_len_field(key, _seat_bytes(_D_SEAT_CARD, "seat", seat)
                         + _len_field(card_key, body)) for body in CARD_BYTES)
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
          for body in ACTION_BYTES)
    for seat in range(_MAX_SEATS))
_REQUEST_LEGAL: Final[tuple[bytes, ...]] = tuple(
    _len_field(_key(_D_REQUEST, "legal_actions", _LEN), body) for body in ACTION_BYTES)
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
          for body in CARD_BYTES)
    for seat in range(_MAX_SEATS))
# [seat][Action.id] -> the bid field.
_EVENT_BID: Final[tuple[tuple[bytes, ...], ...]] = tuple(
    tuple(_len_field(_key(_D_EVENT, "bid", _LEN),
                     _seat_bytes(rpb.Bid.DESCRIPTOR, "seat", seat)
                     + _len_field(_key(rpb.Bid.DESCRIPTOR, "action", _LEN), body))
          for body in ACTION_BYTES)
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


# Whole fields by value, for the fields of every observation (a seat, a suit, a phase).
_SEAT_FIELD = tuple(_K_SEAT + _varint(s) if s else b"" for s in range(_MAX_SEATS))
_DEALER_FIELD = tuple(_K_DEALER + _varint(s) if s else b"" for s in range(_MAX_SEATS))
_CURRENT_FIELD = tuple(_K_CURRENT + _varint(s) for s in range(_MAX_SEATS))  # 0 is written
_MAKER_FIELD = tuple(_K_MAKER + _varint(s) for s in range(_MAX_SEATS))  # 0 is written
_HAND_NUMBER_FIELD = tuple(_K_HAND_NUMBER + _varint(n) if n else b"" for n in range(128))
_DECISION_FIELD: Final[dict[Phase, bytes]] = {
    p: b"" if p in NOT_DECISIONS else _K_DECISION + b for p, b in _DECISION_BYTES.items()}
_TRUMP_FIELD = tuple(_K_TRUMP + b for b in _SUIT_BYTES)
_DEALER_TOOK_FIELD = (_K_DEALER_TOOK + _FALSE, _K_DEALER_TOOK + _TRUE)
_TRICK_LEADER = tuple(_K_TRICK_LEADER + _varint(s) if s else b"" for s in range(_MAX_SEATS))
_TRICK_WINNER = tuple(_K_TRICK_WINNER + _varint(s) if s else b"" for s in range(_MAX_SEATS))


def observation_bytes(obs: Observation) -> bytes:
    (seat, hand_number, dealer, phase, current, hand, upcard, turned_down, dealer_took,
     trump, maker, alone, sitting_out, public_actions, discards, dummy, tricks,
     current_trick, tricks_won, scores, _legal) = obs
    parts = [
        _SEAT_FIELD[seat],
        _HAND_NUMBER_FIELD[hand_number] if hand_number < 128
        else _K_HAND_NUMBER + _varint(hand_number),
        _DEALER_FIELD[dealer],
        _DECISION_FIELD[phase],
        b"" if current is None else _CURRENT_FIELD[current],
    ]
    add = parts.append
    cards = _OBS_HAND
    parts.extend([cards[c.id] for c in hand])
    add(_OBS_UPCARD[upcard.id])
    if turned_down:
        add(_K_TURNED_DOWN + _TRUE)
    if dealer_took is not None:
        add(_DEALER_TOOK_FIELD[dealer_took])
    if trump is not None:
        add(_TRUMP_FIELD[trump])
    if maker is not None:
        add(_MAKER_FIELD[maker])
    if alone:
        add(_packed(_K_ALONE, alone))
    if sitting_out:
        add(_packed(_K_SITTING_OUT, sitting_out))
    public = _OBS_PUBLIC_ACTIONS
    parts.extend([public[s][a.id] for s, a in public_actions])
    if discards:
        cards = _OBS_DISCARDS
        parts.extend([cards[c.id] for c in discards])
    if dummy:
        cards = _OBS_DUMMY
        parts.extend([cards[c.id] for c in dummy])
    if tricks:
        plays = _TRICK_PLAYS
        leaders, winners, small = _TRICK_LEADER, _TRICK_WINNER, _SMALL_VARINTS
        for leader, trick_plays, winner in tricks:
            body = b"".join([leaders[leader], *[plays[s][c.id] for s, c in trick_plays],
                             winners[winner]])
            n = len(body)
            add(_K_TRICKS + (small[n] if n < 128 else _varint(n)) + body)
    if current_trick:
        current_plays = _OBS_CURRENT_TRICK
        parts.extend([current_plays[s][c.id] for s, c in current_trick])
    add(_packed(_K_TRICKS_WON, tricks_won))
    add(_packed(_K_SCORES, scores))
    return b"".join(parts)


def decision_request_bytes(request_id: int, obs: Observation, time_left_ms: int,
                           bank_ms: int) -> bytes:
    """A DecisionRequest for the observing seat: kind, legal actions and observation all
    come from ``obs``."""
    legal = _REQUEST_LEGAL
    body = observation_bytes(obs)
    return b"".join([
        _K_REQ_ID + _varint(request_id) if request_id else b"",
        _K_REQ_KIND + _DECISION_BYTES[obs.phase],
        *[legal[a.id] for a in obs.legal_actions],
        _K_REQ_TIME_LEFT + _varint(time_left_ms) if time_left_ms else b"",
        _K_REQ_BANK + _varint(bank_ms) if bank_ms else b"",
        _K_REQ_OBSERVATION + _varint(len(body)) + body,
    ])


_D_RESPONSE = rpb.ConnectResponse.DESCRIPTOR
_K_RESPONSE_EVENT = _key(_D_RESPONSE, "game_event", _LEN)
_K_RESPONSE_REQUEST = _key(_D_RESPONSE, "decision_request", _LEN)
_K_RESPONSE_BUNDLE = _key(_D_RESPONSE, "bundle", _LEN)
_K_BUNDLE_MESSAGES = _key(rpb.Bundle.DESCRIPTOR, "messages", _LEN)


def game_event_response_bytes(event: bytes) -> bytes:
    """A ConnectResponse{game_event} around a GameEvent's bytes."""
    return _K_RESPONSE_EVENT + _varint(len(event)) + event


def decision_request_response_bytes(request_id: int, obs: Observation, time_left_ms: int,
                                    bank_ms: int) -> bytes:
    """A ConnectResponse{decision_request} (see :func:`decision_request_bytes`)."""
    body = decision_request_bytes(request_id, obs, time_left_ms, bank_ms)
    return _K_RESPONSE_REQUEST + _varint(len(body)) + body


def bundle_response_bytes(encoded: Sequence[bytes]) -> bytes:
    """A ConnectResponse{bundle} holding the ConnectResponses ``encoded`` (wire bytes),
    in order; a Bundle even with none."""
    key, v = _K_BUNDLE_MESSAGES, _varint
    body = b"".join([key + v(len(m)) + m for m in encoded])
    return _K_RESPONSE_BUNDLE + v(len(body)) + body


def _hand_number_bytes(hand_number: int) -> bytes:
    return _K_EVENT_HAND_NUMBER + _varint(hand_number) if hand_number else b""


def play_event_bytes(hand_number: int, seat: int, card: Card) -> bytes:
    """A GameEvent{card_played}."""
    return _hand_number_bytes(hand_number) + _EVENT_PLAY[seat][card.id]


def trick_event_bytes(hand_number: int, seat: int, trick_number: int) -> bytes:
    """A GameEvent{trick_won}: ``seat`` won trick ``trick_number`` (1..5)."""
    return _hand_number_bytes(hand_number) + _EVENT_TRICK[seat][trick_number]


def bid_event_bytes(hand_number: int, seat: int, action: Action) -> bytes:
    """A GameEvent{bid}."""
    return _hand_number_bytes(hand_number) + _EVENT_BID[seat][action.id]
