"""Connections and streams that wait cannot lock bots out of a referee's port.

Streams that wait for their Hello: a caller that keeps the
referee's waiting room full of silent streams (the most it holds at once is
:data:`~harness.referee.server.MAX_OPENING`) only ever pushes out its own, so a bot that
dials meanwhile connects and says Hello while the silent streams are still held.

Before, the room refused newcomers once full: anyone who could reach the port kept every
bot from connecting (a bot that could not connect lost its games as startup failures).

Connections: each port takes a share of the open-file limit
(:func:`~harness.referee.server.connection_cap`), which ``match`` and ``run`` now raise
to the hard limit as ``serve`` and ``ladder`` do (under the usual soft limit of 1,024, 170
idle connections filled a match's port), and a connection with no call in progress is
closed after :data:`~harness.referee.server.CONNECTION_IDLE_MS`."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import grpc
import pytest

from harness.protocol import RefereeServiceStub
from harness.referee import server as referee_server
from harness.referee.server import MAX_OPENING, RefereeServer
from harness.referee.session import Slot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT_S = 90.0


class Silent:
    """Silent Connect streams on one connection, each opened again when the referee
    ends it to make room (but not when its handshake time runs out), at most
    ``reopen`` times in all."""

    def __init__(self, address: str, reopen: int) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = RefereeServiceStub(self.channel)
        self.reopen = reopen
        self.live = 0
        self.ends: Counter[str] = Counter()
        self.tasks: set[asyncio.Task[None]] = set()

    def open(self) -> None:
        self.live += 1
        task = asyncio.ensure_future(self._hold())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _hold(self) -> None:
        call = self.stub.Connect()
        try:
            await call.read()
            code = "answered"
        except grpc.aio.AioRpcError as e:
            code = e.code().name
        self.live -= 1
        self.ends[code] += 1
        if code == "RESOURCE_EXHAUSTED" and self.reopen > 0:
            self.reopen -= 1
            self.open()

    async def close(self) -> None:
        await self.channel.close()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def connect_beside_silent_streams() -> tuple[int, Counter[str]]:
    # A handshake timeout far longer than the test: the silent streams are never let go
    # for want of a Hello while the bot dials, however slowly the machine starts it.
    server = RefereeServer(handshake_timeout=10 * WAIT_S)
    await server.start()
    silent = Silent(server.address, reopen=4 * MAX_OPENING)
    proc = None
    try:
        for _ in range(MAX_OPENING):
            silent.open()
        assert server.servicer is not None
        while len(server.servicer.waiting) < MAX_OPENING:  # the room is full
            await asyncio.sleep(0.01)
        slot: Slot = server.registry.add("honest", 0)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "sample_bots.random_bot", "--address", server.address,
            "--token", slot.token, cwd=REPO, env={**os.environ, "PYTHONPATH": REPO},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL)
        await slot.wait_connected(WAIT_S)
        return silent.live, silent.ends
    finally:
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await silent.close()
        await server.stop(grace=1.0)


def test_a_bot_connects_while_silent_streams_fill_the_waiting_room() -> None:
    live, ends = asyncio.run(asyncio.wait_for(connect_beside_silent_streams(), 3 * WAIT_S))
    # The bot got in while the room was full of silent streams: at most the few that
    # its arrival pushed out and that were not opened again yet are missing.
    assert live >= MAX_OPENING - 2, (live, ends)
    assert ends["RESOURCE_EXHAUSTED"] >= 1, ends  # its room was made by ending one
    assert set(ends) <= {"RESOURCE_EXHAUSTED"}, ends


def test_a_connection_with_no_call_in_progress_is_closed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(referee_server, "CONNECTION_IDLE_MS", 500)

    async def main() -> list[grpc.ChannelConnectivity]:
        server = RefereeServer()
        await server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                await asyncio.wait_for(channel.channel_ready(), WAIT_S)
                states = [channel.get_state()]
                while states[-1] is grpc.ChannelConnectivity.READY:
                    await asyncio.wait_for(channel.wait_for_state_change(states[-1]),
                                           WAIT_S)
                    states.append(channel.get_state())
                return states
        finally:
            await server.stop(grace=1.0)

    states = asyncio.run(main())
    # The referee closed it (the client goes back to IDLE, and dials again when asked).
    assert states[-1] is grpc.ChannelConnectivity.IDLE, states


def test_a_match_raises_its_open_file_limit(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    hard = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    proc = subprocess.Popen(
        ["prlimit", f"--nofile=256:{hard}", sys.executable, "-m", "harness", "match",
         "--form", "two-handed", "--games", "1", "--port", "0",
         "--bot", "absent@remote=tok-" + "a" * 24,
         "--bot", "random={python} -m sample_bots.random_bot",
         "--log-dir", str(tmp_path / "logs"), "--store", str(tmp_path / "m.sqlite")],
        cwd=REPO, env={**os.environ, "PYTHONPATH": REPO}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        said = []
        for line in proc.stderr:  # until it says it listens (its bot never dials)
            said.append(line)
            if line.startswith("referee on "):
                break
        else:
            raise AssertionError(f"it never said where it listens: {said}")
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        soft = next(x.split()[3] for x in limits.splitlines() if x.startswith("Max open files"))
        assert int(soft) == hard, limits
    finally:
        proc.kill()
        proc.wait(WAIT_S)
