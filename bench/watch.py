"""A watched tournament on ``serve``: the event loop's lag while operators follow it.

    python bench/watch.py [--games 600] [--watchers 1] [--concurrency 4]

Runs serve's tournament service in this process, on a real referee on loopback: the
random sample bot against a second copy of itself, two-handed to 5 points, ``--games``
deal sets played on both tables (twice as many games), ``--concurrency`` games at once.
``--watchers`` WatchTournament clients follow it over gRPC while a task asks to wake
every 10 ms and records how late it woke. Each update a watcher gets reads the store and
fits the standings, which takes longer as the tournament grows. Reports games per second
and, over the second half of the run (when the standings cost most), the lag's median,
99th percentile and largest, and how many updates the watchers got.

The loop is the one that times the bots' decisions: its lag is time a bot could be
charged for a reply that had already arrived. Compare runs with ``--watchers 0`` and
``--watchers 1`` made one after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc

from harness._generated.euchre.v1 import referee_pb2 as rpb
from harness._generated.euchre.v1 import referee_pb2_grpc as rpc
from harness.referee.arena import Arena
from harness.tournament.service import TournamentService

ROOT = Path(__file__).resolve().parent.parent
TICK_S = 0.010


def config(games: int, concurrency: int) -> str:
    bot = '''
[[bot]]
name = "{name}"
command = "{{python}} -m sample_bots.random_bot"
cwd = "{root}"
env = {{ EUCHRE_BOT_SEED = "{seed}" }}
'''
    return (f'name = "watched"\ngames = {games}\nduplicate = true\n'
            f'concurrency = {concurrency}\ntc = "2+20"\n'
            '[rules]\nform = "two-handed"\ntarget = 5\n'
            + bot.format(name="random", root=ROOT, seed=1)
            + bot.format(name="random-2", root=ROOT, seed=2))


async def run(games: int, watchers: int, concurrency: int) -> dict[str, float]:
    lags: list[tuple[float, float]] = []  # (when, how late the probe woke)
    updates = 0

    async def probe() -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(TICK_S)
            lags.append((loop.time(), loop.time() - asked - TICK_S))

    async def watch(op: Any) -> None:  # an aio stub: its generated hints are sync
        nonlocal updates
        async for _ in op.WatchTournament(rpb.WatchTournamentRequest(tournament_id="watched")):
            updates += 1

    with tempfile.TemporaryDirectory() as tmp:
        async with Arena(log_dir=Path(tmp) / "logs") as arena:
            service = TournamentService(arena, Path(tmp) / "out")
            arena.server.tournaments = service
            async with grpc.aio.insecure_channel(arena.server.address) as channel:
                op: Any = rpc.OperatorServiceStub(channel)
                await op.StartTournament(rpb.StartTournamentRequest(
                    config_toml=config(games, concurrency)))
                loop = asyncio.get_running_loop()
                probing = asyncio.ensure_future(probe())
                start = loop.time()
                followers = [asyncio.ensure_future(watch(op)) for _ in range(watchers)]
                while "watched" in service.running():
                    await asyncio.sleep(0.2)
                end = loop.time()
                await asyncio.gather(*followers)
                probing.cancel()
                while True:  # until its files are written: it shows a final status then
                    got = await op.GetTournament(
                        rpb.GetTournamentRequest(tournament_id="watched"))
                    if got.tournament.status != rpb.TOURNAMENT_STATUS_RUNNING:
                        break
                    await asyncio.sleep(0.5)
    half = (start + end) / 2
    late = sorted(lag for when, lag in lags if when >= half) or [0.0]
    stored = got.tournament.games_done
    return {"games": float(stored), "games_per_s": stored / (end - start),
            "lag_median_ms": 1000 * statistics.median(late),
            "lag_p99_ms": 1000 * late[min(len(late) - 1, int(0.99 * len(late)))],
            "lag_max_ms": 1000 * late[-1], "updates": float(updates)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=600, help="deal sets (two games each)")
    ap.add_argument("--watchers", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    figures = asyncio.run(run(args.games, args.watchers, args.concurrency))
    print(f"{args.watchers} watcher(s), {figures['games']:.0f} games stored, "
          f"{figures['games_per_s']:.1f} games/s, {figures['updates']:.0f} updates")
    print(f"event loop's lag over the second half: median {figures['lag_median_ms']:.1f} ms, "
          f"p99 {figures['lag_p99_ms']:.1f} ms, largest {figures['lag_max_ms']:.1f} ms")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
