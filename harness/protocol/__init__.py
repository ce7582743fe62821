"""The gRPC protocol between the referee and bots (``proto/euchre/v1/*.proto``).

This package is the only part of the harness that imports the generated code in
:mod:`harness._generated` (rebuilt by ``scripts/gen_proto.py``). It offers:

* :mod:`harness.protocol.convert`: protobuf <-> the rules engine's objects, both ways;
* :mod:`harness.protocol.messages`: builders for every message of a ``Connect`` stream
  (Hello, Welcome, Refusal, GameStart, Fault, GameOver, Shutdown...);
* :mod:`harness.protocol.tls`: TLS credentials for the referee's port and the channels
  that dial it;
* here: :data:`PROTOCOL_VERSION`, the message size limits the referee enforces, the
  message types and the service classes (stub, servicer base) the referee and the SDK
  need.

The generated modules stay reachable as ``pb``, ``rpb`` and ``rpb_grpc`` for tests and
scripts; the harness itself uses the names below.
"""

from typing import Any

import grpc
from google.protobuf.message import DecodeError

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpb_grpc
from harness._generated.euchre.v1.referee_pb2 import (
    REFUSAL_REASON_BAD_TOKEN,
    REFUSAL_REASON_MALFORMED,
    REFUSAL_REASON_SHUTTING_DOWN,
    REFUSAL_REASON_TOKEN_IN_USE,
    REFUSAL_REASON_UNSUPPORTED_DECK,
    REFUSAL_REASON_UNSUPPORTED_FORM,
    REFUSAL_REASON_UNSUPPORTED_VERSION,
    ConnectRequest,
    ConnectResponse,
    DecisionReply,
    DecisionRequest,
    GameEvent,
    GameOver,
    GameStart,
    Hello,
)
from harness._generated.euchre.v1.referee_pb2_grpc import (
    RefereeServiceServicer,
    RefereeServiceStub,
    add_RefereeServiceServicer_to_server,
)
from harness.protocol import messages
from harness.protocol.messages import PROTOCOL_VERSION

REFEREE_SERVICE_NAME: str = rpb.DESCRIPTOR.services_by_name["RefereeService"].full_name
"""``euchre.v1.RefereeService``, for server reflection."""

MAX_MESSAGE_BYTES = 64 * 1024
"""The largest message a bot may send (a Hello included). The largest legal message is
about 2 KB; a bigger one is refused (Hello) or a protocol violation."""

TRANSPORT_MAX_BYTES = 4 * 1024 * 1024
"""The gRPC transport's own receive limit, a backstop above :data:`MAX_MESSAGE_BYTES`:
the referee checks sizes itself, so that an oversized message is charged as a protocol
violation with the Fault and GameOver sent back, not seen as a hang-up."""


def add_referee_service(servicer: RefereeServiceServicer, server: Any) -> None:
    """Serve ``servicer`` as ``RefereeService`` on ``server``, as the generated
    ``add_RefereeServiceServicer_to_server`` does, except that a message written to the
    stream may also be its wire bytes (:func:`messages.encode` is the serializer)."""
    handlers = {"Connect": grpc.stream_stream_rpc_method_handler(
        servicer.Connect, request_deserializer=ConnectRequest.FromString,
        response_serializer=messages.encode)}
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFEREE_SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(REFEREE_SERVICE_NAME, handlers)


__all__ = [
    "MAX_MESSAGE_BYTES",
    "PROTOCOL_VERSION",
    "REFEREE_SERVICE_NAME",
    "REFUSAL_REASON_BAD_TOKEN",
    "REFUSAL_REASON_MALFORMED",
    "REFUSAL_REASON_SHUTTING_DOWN",
    "REFUSAL_REASON_TOKEN_IN_USE",
    "REFUSAL_REASON_UNSUPPORTED_DECK",
    "REFUSAL_REASON_UNSUPPORTED_FORM",
    "REFUSAL_REASON_UNSUPPORTED_VERSION",
    "TRANSPORT_MAX_BYTES",
    "ConnectRequest",
    "ConnectResponse",
    "DecisionReply",
    "DecisionRequest",
    "DecodeError",
    "GameEvent",
    "GameOver",
    "GameStart",
    "Hello",
    "RefereeServiceServicer",
    "RefereeServiceStub",
    "add_RefereeServiceServicer_to_server",
    "add_referee_service",
    "pb",
    "rpb",
    "rpb_grpc",
]
