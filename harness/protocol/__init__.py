"""The gRPC protocol between the referee and bots (``proto/euchre/v1/*.proto``).

The generated message and service modules live in :mod:`harness._generated` (rebuilt by
``scripts/gen_proto.py``); :mod:`harness.protocol.convert` is the one place that turns
them into the rules engine's objects and back. The aliases below save importers the
long generated paths::

    from harness.protocol import pb, rpb, rpb_grpc
"""

from harness._generated.euchre.v1 import euchre_pb2 as pb
from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpb_grpc

PROTOCOL_VERSION = 1
"""The protocol version this package speaks (Hello.protocol_version, Welcome)."""

__all__ = ["PROTOCOL_VERSION", "pb", "rpb", "rpb_grpc"]
