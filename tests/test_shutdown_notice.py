"""A referee that stops tells every connected bot at once: bots that do not read their
stream cannot hold up the others' Shutdown, nor the stop, by the second each write is
given. Before, the notices went out one bot after another, so each bot that held its
stream added a second to a Ctrl-C.

Over real gRPC: the bots are clients here that shrink their receive window to one byte
(any gRPC client can), so that a write to them ends only when they read; the holders
read their Welcome and nothing more."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from window_seats import play_seat, token

from harness.protocol import messages, rpb
from harness.referee.arena import Arena
from harness.referee.pool import Entrant
from harness.referee.session import Session

HOLDERS = [f"holder-{n}" for n in range(5)]
NAMES = [*HOLDERS, "reader"]


def test_a_stopping_referee_tells_every_bot_at_once(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sending = 0
    most = 0
    send = Session.send

    async def counted(self: Session, message: messages.Outgoing) -> None:
        nonlocal sending, most
        if self.closed.is_set() or not isinstance(message, rpb.ConnectResponse) or \
                message.WhichOneof("payload") != "shutdown":
            return await send(self, message)
        sending += 1
        most = max(most, sending)
        try:
            await send(self, message)
        finally:
            sending -= 1

    monkeypatch.setattr(Session, "send", counted)
    told = asyncio.Event()

    async def go() -> None:
        never = asyncio.Event()

        async def hold(n: int) -> None:  # reads its Welcome, then nothing
            if n >= 1:
                await never.wait()

        async def shutdown(message: rpb.ConnectResponse) -> None:
            if message.WhichOneof("payload") == "shutdown":
                told.set()

        arena = Arena(log_dir=tmp_path)
        await arena.__aenter__()
        try:
            for name in NAMES:
                arena.add(Entrant(name, tokens=(token(name),)), 1)
            clients = [asyncio.ensure_future(play_seat(
                arena.server.address, name, asyncio.Event(),
                before_read=hold if name in HOLDERS else lambda n: asyncio.sleep(0),
                after_read=shutdown if name == "reader" else None)) for name in NAMES]
            slots = [arena.pool.instances(name)[0].slot for name in NAMES]
            for slot in slots:
                await slot.wait_connected(60)
        finally:
            await arena.close()
        await asyncio.wait_for(told.wait(), 60)
        for client in clients:
            client.cancel()
        await asyncio.gather(*clients, return_exceptions=True)

    asyncio.run(go())
    # Every holder's Shutdown was being written at the same time (each cut after its
    # second); the bot that reads got its own (awaited above).
    assert len(HOLDERS) <= most <= len(NAMES), most
