"""Builders for the messages of a ``Connect`` stream (``referee.proto``), in the engine's
terms: the referee, the SDK and the test bots build every message they send here, so the
rest of the harness never sets protobuf fields by hand.

Referee -> bot: :func:`welcome`, :func:`refusal`, :func:`game_start`, :func:`hand_start`,
:func:`game_event`, :func:`decision_request`, :func:`fault`, :func:`game_over`,
:func:`shutdown` and :func:`bundle`, each a complete ``ConnectResponse``. The messages of
every decision also come as their wire bytes (:data:`Outgoing`), built without a message
object: :func:`decision_request_bytes`, :func:`game_event_bytes` and
:func:`bundle_bytes`; the referee writes those bytes as they are (its ``Connect``
handler's serializer is :func:`encode`). They are the bytes protobuf would write for the
same message (the protocol tests compare them).

Bot -> referee: :func:`hello` and :func:`decision_reply`, each a ``ConnectRequest``.

Fault kinds and game terminations are named by the referee's enum values as text
(``"timeout"``, ``"forfeit"``...), so this layer does not depend on the referee's types.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness.protocol import _wire, convert
from harness.protocol._tables import enum_name
from harness.rules.actions import Action
from harness.rules.cards import DeckKind
from harness.rules.config import Form, RulesConfig
from harness.rules.hand import Event, Hand
from harness.rules.observation import Observation

PROTOCOL_VERSION: Final = 1
"""The protocol version this package speaks (``Hello.protocol_version``, ``Welcome``)."""


def _by_suffix(enum_type: Any, prefix: str) -> dict[str, int]:
    """``{"timeout": FAULT_KIND_TIMEOUT, ...}``: every value but UNSPECIFIED, keyed by its
    name without ``prefix``, in lower case (the referee's enum values)."""
    return {name.removeprefix(prefix).lower(): value
            for name, value in enum_type.items() if not name.endswith("_UNSPECIFIED")}


# "timeout", "illegal_action", "protocol_violation", "late_reply" -> FaultKind. The kinds
# that end a stream (disconnect, crash, ...) have no value: their notices say UNSPECIFIED.
FAULT_KIND_TO_PB: Final[dict[str, int]] = _by_suffix(rpb.FaultKind, "FAULT_KIND_")
# "normal", "forfeit", "interrupted", "hand_limit" -> GameTermination.
TERMINATION_TO_PB: Final[dict[str, int]] = _by_suffix(rpb.GameTermination,
                                                       "GAME_TERMINATION_")


# --------------------------------------------------------------------------- bot -> referee


def hello(bot_name: str, bot_version: str, token: str, *, forms: Iterable[Form] = (),
          decks: Iterable[DeckKind] = (), bundles: bool = False) -> rpb.ConnectRequest:
    """The handshake (always for :data:`PROTOCOL_VERSION`)."""
    caps = rpb.Capabilities(forms=[convert.FORM_TO_PB[f] for f in forms],
                            decks=[convert.DECK_TO_PB[d] for d in decks], bundles=bundles)
    return rpb.ConnectRequest(hello=rpb.Hello(
        protocol_version=PROTOCOL_VERSION, bot_name=bot_name, bot_version=bot_version,
        token=token, capabilities=caps))


def decision_reply(request_id: int, action: Action) -> rpb.ConnectRequest:
    """The answer to request ``request_id``."""
    return rpb.ConnectRequest(decision_reply=rpb.DecisionReply(
        request_id=request_id, action=convert.action_to_pb(action)))


# --------------------------------------------------------------------------- referee -> bot


def welcome(session_id: str, referee_version: str) -> rpb.ConnectResponse:
    return rpb.ConnectResponse(welcome=rpb.Welcome(
        session_id=session_id, protocol_version=PROTOCOL_VERSION,
        referee_version=referee_version))


def refusal(reason: rpb.RefusalReason.ValueType, detail: str) -> rpb.ConnectResponse:
    return rpb.ConnectResponse(refusal=rpb.Refusal(reason=reason, detail=detail))


def shutdown(reason: str, *, restarting: bool = False) -> rpb.ConnectResponse:
    """The referee stops; ``restarting``: it is a standing one that will start again, so
    the bot should reconnect rather than exit."""
    return rpb.ConnectResponse(shutdown=rpb.Shutdown(reason=reason, restarting=restarting))


Outgoing = rpb.ConnectResponse | bytes
"""A message for a bot: a ``ConnectResponse``, or its wire bytes."""


def encode(message: Outgoing) -> bytes:
    """A message's wire bytes (the referee's serializer for what it writes to bots)."""
    return message if isinstance(message, bytes) else message.SerializeToString()


def decode(message: Outgoing) -> rpb.ConnectResponse:
    """The message itself (bytes are parsed)."""
    return rpb.ConnectResponse.FromString(message) if isinstance(message, bytes) else message


def decision_request_in(message: Outgoing) -> rpb.DecisionRequest | None:
    """The decision request a write to a bot carries, alone or last in its Bundle (None
    if it carries none): what a stand-in for a bot's stream answers."""
    decoded = decode(message)
    if decoded.WhichOneof("payload") == "bundle":
        decoded = decoded.bundle.messages[-1]
    return (decoded.decision_request if decoded.WhichOneof("payload") == "decision_request"
            else None)


def size(message: Outgoing) -> int:
    """The message's size on the wire, in bytes."""
    return len(message) if isinstance(message, bytes) else message.ByteSize()


def bundle_bytes(messages: Sequence[Outgoing]) -> bytes:
    """:func:`bundle` as wire bytes: the messages' bytes placed in one Bundle."""
    return _wire.bundle_response_bytes([encode(m) for m in messages])


def decision_request_bytes(request_id: int, obs: Observation, time_left_ms: int,
                           bank_ms: int) -> bytes:
    """The ConnectResponse of a DecisionRequest, as wire bytes: the message of
    :func:`decision_request` around
    :func:`~harness.protocol.convert.decision_request_to_pb`."""
    convert.check_decision(obs)
    return _wire.decision_request_response_bytes(request_id, obs, time_left_ms, bank_ms)


def game_event_bytes(hand_number: int, event: Event, *, trick_number: int | None = None,
                     scores: Sequence[int] | None = None) -> bytes | None:
    """:func:`game_event` as wire bytes (None for DEAL)."""
    data = convert.frequent_event_bytes(hand_number, event, trick_number)
    if data is not None:  # the events of every decision: never a message object
        return _wire.game_event_response_bytes(data)
    msg = game_event(hand_number, event, trick_number=trick_number, scores=scores)
    return None if msg is None else msg.SerializeToString()


def bundle(messages: Sequence[rpb.ConnectResponse]) -> rpb.ConnectResponse:
    """Several messages in one, for a bot that takes Bundles."""
    # Each message copied once, into place (building a Bundle and then the response
    # from it copies everything twice: about twice the time, once per decision).
    response = rpb.ConnectResponse()
    response.bundle.SetInParent()  # a Bundle even with no messages
    add = response.bundle.messages.add
    for message in messages:
        add().CopyFrom(message)
    return response


def game_start(game_id: str, rules: RulesConfig | pb.RulesOptions, seat: int,
               seat_names: Sequence[str], *, increment_ms: int, bank_ms: int,
               partner_seat: int | None = None) -> rpb.ConnectResponse:
    """The GameStart of ``seat``. ``rules`` may be converted once per game by the caller
    (:func:`~harness.protocol.convert.rules_to_pb`) and shared by every seat."""
    options = convert.rules_to_pb(rules) if isinstance(rules, RulesConfig) else rules
    return rpb.ConnectResponse(game_start=rpb.GameStart(
        game_id=game_id, rules=options, seat=seat, partner_seat=partner_seat,
        seat_names=seat_names, target=options.target,
        time_control=rpb.TimeControl(increment_ms=increment_ms, bank_ms=bank_ms)))


def hand_start(hand: Hand, seat: int, hand_number: int,
               scores: Sequence[int]) -> rpb.ConnectResponse:
    """``seat``'s HandStart (see :func:`~harness.protocol.convert.hand_start_to_pb`)."""
    return rpb.ConnectResponse(hand_start=convert.hand_start_to_pb(hand, seat, hand_number,
                                                                   scores))


def game_event(hand_number: int, event: Event, *, trick_number: int | None = None,
               scores: Sequence[int] | None = None) -> rpb.ConnectResponse | None:
    """An engine event as a message, or None for DEAL (see :func:`hand_start`). The
    arguments are those of :func:`~harness.protocol.convert.event_to_pb`."""
    data = convert.frequent_event_bytes(hand_number, event, trick_number)
    if data is not None:  # the events of every decision: parsed once, not built and copied
        return rpb.ConnectResponse.FromString(_wire.game_event_response_bytes(data))
    pbev = convert.event_to_pb(hand_number, event, trick_number=trick_number, scores=scores)
    return None if pbev is None else rpb.ConnectResponse(game_event=pbev)


def decision_request(request: rpb.DecisionRequest) -> rpb.ConnectResponse:
    """A DecisionRequest (from :func:`~harness.protocol.convert.decision_request_to_pb`)
    as a message."""
    return rpb.ConnectResponse(decision_request=request)


def fault(kind: str, detail: str, *, strikes: int = 0, request_id: int = 0,
          played_action: Action | None = None) -> rpb.ConnectResponse:
    """A Fault notice. ``kind`` is a fault kind's value (``"timeout"``...); a kind the
    protocol has no value for is sent as FAULT_KIND_UNSPECIFIED."""
    return rpb.ConnectResponse(fault=rpb.Fault(
        kind=FAULT_KIND_TO_PB.get(kind, rpb.FAULT_KIND_UNSPECIFIED),  # type: ignore[arg-type]
        detail=detail, strikes=strikes, request_id=request_id,
        played_action=None if played_action is None else convert.action_to_pb(played_action)))


def game_over(game_id: str, *, termination: str, scores: Sequence[int],
              places: Sequence[int], seat: int, winner_team: int | None,
              forfeit_seat: int | None, detail: str,
              hands_played: int) -> rpb.ConnectResponse:
    """``seat``'s GameOver; ``termination`` is a termination's value (``"normal"``...)."""
    return rpb.ConnectResponse(game_over=rpb.GameOver(
        game_id=game_id, scores=scores, winner_team=winner_team, places=places,
        your_place=places[seat],
        termination=TERMINATION_TO_PB[termination],  # type: ignore[arg-type]
        detail=detail, forfeit_seat=forfeit_seat, hands_played=hands_played))


# --------------------------------------------------------------------------- names


def form_name(value: int) -> str:
    """``FORM_TWO_HANDED`` for a Form value; the number for an unknown one."""
    return enum_name(pb.Form, value)


def deck_name(value: int) -> str:
    return enum_name(pb.Deck, value)


def refusal_reason_name(value: int) -> str:
    return enum_name(rpb.RefusalReason, value)
