"""A seat tells whoever watches the referee's seats each change of its stream at the
moment it happens (a ladder lists bots by these changes): a real sample bot dials a
real referee over gRPC; its stream is live once it claims the seat, ready once its
Welcome is written, and no longer live the moment the referee closes it, before the
stream's own handler has run again."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from waiting import WAIT_S, wait_until

from harness.referee.server import RefereeServer
from harness.referee.session import Slot

ROOT = Path(__file__).resolve().parent.parent


def test_a_seat_announces_its_stream_claimed_welcomed_and_closed_at_once() -> None:
    async def scenario() -> None:
        server = RefereeServer()
        await server.start()
        seen: list[tuple[str, bool, bool]] = []

        def changed(slot: Slot) -> None:
            seen.append((slot.name, slot.live, slot.ready))

        server.registry.watch(changed)
        slot = server.registry.add("sample", 0)
        bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot",
                                "--address", server.address, "--token", slot.token],
                               cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            session = await slot.wait_connected(WAIT_S)
            # claimed (live, not yet ready), then welcomed (ready)
            assert seen == [("sample", True, False), ("sample", True, True)]
            session.close("closed by the test")
            # told in the same step, not when the stream's handler next runs
            assert seen[-1] == ("sample", False, False) and len(seen) == 3
            await wait_until(lambda: len(seen) >= 4, "the stream's end to let go of the seat")
            assert seen[3] == ("sample", False, False)
        finally:
            bot.kill()
            bot.wait()
            await server.stop(grace=1.0)

    asyncio.run(asyncio.wait_for(scenario(), WAIT_S))
