"""A registered bot that walks away from the ladder: it plays random legal actions on
``--streams`` streams and, whenever its side loses a game at table 0 of a deal set,
closes every stream at once and dials again ``--back-after`` seconds later. Run as a
process (``python tests/walkaway_bot.py --address HOST:PORT --token TOKEN``); it plays
until it is killed, and prints ``walked away after GAME`` on stderr each time it leaves.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys

import grpc

from harness.errors import HandshakeRefused, RefereeRestarting
from harness.protocol import GameOver
from harness.sdk import play_session
from sample_bots.random_bot import RandomBot


class Walker(RandomBot):
    """A random bot that sets ``lost`` to the game id when its side loses table 0."""

    name = "walker"

    def __init__(self, seed: int, lost: asyncio.Future[str]) -> None:
        super().__init__(seed)
        self.lost = lost

    def on_game_over(self, message: GameOver) -> None:
        if message.game_id.endswith("/t0") and message.your_place != 1 \
                and not self.lost.done():
            self.lost.set_result(message.game_id)


async def _streams(address: str, token: str, streams: int, seed: int) -> str | None:
    """Open the streams; return the game whose loss made them all close (None when a
    stream ended or was refused on its own)."""
    lost: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    sessions = [asyncio.ensure_future(play_session(Walker(seed + i, lost), address, token))
                for i in range(streams)]
    await asyncio.wait([lost, *sessions], return_when=asyncio.FIRST_COMPLETED)
    for session in sessions:  # every stream at once
        session.cancel()
    await asyncio.gather(*sessions, return_exceptions=True)
    for session in sessions:
        if session.done() and not session.cancelled() and isinstance(
                session.exception(), (HandshakeRefused, RefereeRestarting,
                                      grpc.aio.AioRpcError)):
            print(f"walker: {session.exception()}", file=sys.stderr, flush=True)
    return lost.result() if lost.done() else None


async def main(address: str, token: str, streams: int, back_after: float) -> None:
    rng = random.Random(7)
    while True:
        game = await _streams(address, token, streams, rng.randrange(1 << 30))
        if game is not None:
            print(f"walked away after {game}", file=sys.stderr, flush=True)
        await asyncio.sleep(back_after)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--streams", type=int, default=2)
    ap.add_argument("--back-after", type=float, default=0.1)
    args = ap.parse_args()
    asyncio.run(main(args.address, args.token, args.streams, args.back_after))
