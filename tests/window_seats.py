"""Seats played by gRPC clients in the test's process that shrink their receive window to
one byte (any gRPC client can), so that the referee's write of a message to them ends
only when they read it: the tests decide when each write completes."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc

from harness.protocol import messages, rpb, rpb_grpc

WINDOW = [("grpc.http2.lookahead_bytes", 1), ("grpc.http2.bdp_probe", 0)]


def token(name: str) -> str:
    return f"{name}-token"


async def _nothing(_: int) -> None:
    return None


async def play_seat(address: str, name: str, got_game_over: asyncio.Event, *,
                    bundles: bool = False,
                    before_read: Callable[[int], Awaitable[None]] = _nothing,
                    after_read: Callable[[rpb.ConnectResponse], Awaitable[None]] | None = None,
                    ) -> None:
    """Play a seat at random, answering each request at once, until the game is over.
    ``before_read(n)`` is awaited before the stream's n-th message is read (0: the
    Welcome), ``after_read`` after each message read (with bundles, each message in a
    Bundle)."""
    replies: asyncio.Queue[rpb.ConnectRequest | None] = asyncio.Queue()

    async def requests() -> AsyncIterator[rpb.ConnectRequest]:
        yield messages.hello(name, "1", token(name), bundles=bundles)
        while (reply := await replies.get()) is not None:
            yield reply

    rng = random.Random(name)
    async with grpc.aio.insecure_channel(address, options=WINDOW) as channel:
        call = rpb_grpc.RefereeServiceStub(channel).Connect(requests())
        try:
            for n in itertools.count():
                await before_read(n)
                read = await call.read()
                if not isinstance(read, rpb.ConnectResponse):
                    return
                for message in (read.bundle.messages if read.WhichOneof("payload") == "bundle"
                                else (read,)):
                    which = message.WhichOneof("payload")
                    if which == "game_over":
                        got_game_over.set()
                        return
                    if which == "decision_request":
                        request = message.decision_request
                        await replies.put(rpb.ConnectRequest(
                            decision_reply=rpb.DecisionReply(
                                request_id=request.request_id,
                                action=rng.choice(list(request.legal_actions)))))
                    if after_read is not None:
                        await after_read(message)
        except grpc.aio.AioRpcError:
            return
        finally:
            await replies.put(None)
