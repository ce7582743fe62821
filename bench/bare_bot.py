"""A random bot without the SDK, for ``bench/referee.py --bare-bots``.

    python bench/bare_bot.py --address HOST:PORT [--token TOKEN]

It speaks ``euchre.v1`` as the raw clients of ``bench/pingpong.py`` do: the Hello (with
bundles), then for every decision request, alone or last in a Bundle, a reply with a
random legal action taken from the request as it is, and nothing else (no Observation,
no events decoded, no actions converted). Played in the referee's place of the sample
random bot, it shows how much of a decision's wall time is the SDK's work on the bot's
side. ``--address`` and ``--token`` default to ``EUCHRE_REFEREE_ADDRESS`` and
``EUCHRE_BOT_TOKEN``, as for every bot the referee starts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from harness._generated.euchre.v1 import referee_pb2 as rpb  # noqa: E402
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc  # noqa: E402
from harness.protocol.messages import PROTOCOL_VERSION  # noqa: E402


def reply_to(message: rpb.ConnectResponse) -> rpb.ConnectRequest | None:
    """The reply to a decision request, alone or last in a Bundle; None otherwise."""
    if message.WhichOneof("payload") == "bundle":
        message = message.bundle.messages[-1]
    if message.WhichOneof("payload") != "decision_request":
        return None
    request = message.decision_request
    return rpb.ConnectRequest(decision_reply=rpb.DecisionReply(
        request_id=request.request_id, action=random.choice(request.legal_actions)))


async def play(address: str, token: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        call = rpc.RefereeServiceStub(channel).Connect()
        await call.write(rpb.ConnectRequest(hello=rpb.Hello(
            protocol_version=PROTOCOL_VERSION, bot_name="bare", bot_version="1",
            token=token, capabilities=rpb.Capabilities(bundles=True))))
        while True:
            message = await call.read()
            if not isinstance(message, rpb.ConnectResponse):  # grpc.aio.EOF
                return
            if message.WhichOneof("payload") == "shutdown":
                return
            reply = reply_to(message)
            if reply is not None:
                await call.write(reply)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--address", default=os.environ.get("EUCHRE_REFEREE_ADDRESS"))
    ap.add_argument("--token", default=os.environ.get("EUCHRE_BOT_TOKEN", ""))
    args = ap.parse_args(argv)
    if not args.address:
        ap.error("no referee address: pass --address or set EUCHRE_REFEREE_ADDRESS")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(play(args.address, args.token))


if __name__ == "__main__":
    main()
