"""``euchre-harness serve``: a long-running referee for remote bots and operator calls."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli import COMMANDS
from harness.cli.common import (
    add_http_flags,
    add_listen_flags,
    add_tls_flags,
    check_listen,
    games,
    long_running,
    on_signals,
    operator_token,
    writable_folder,
)
from harness.errors import ConfigError
from harness.hosting.build import BuildPolicy
from harness.hosting.files import DEFAULT_DISK_RESERVE, DEFAULT_MAX_BYTES
from harness.protocol.tls import ServerTLS, server_tls
from harness.referee.arena import Arena

if TYPE_CHECKING:
    from harness.tournament.service import TournamentService


def register(sub: Any) -> None:
    s = sub.add_parser("serve", help=COMMANDS["serve"],
                       description="Run a referee that stays up: remote bots connect with "
                                   "their tokens, and operators list bots and start, watch "
                                   "and cancel tournaments over gRPC. SIGINT or SIGTERM shut "
                                   "it down gracefully.")
    add_listen_flags(s, port=50051, log_dir="results/logs")
    s.add_argument("--output", default="results",
                   help="results folder: each tournament gets OUTPUT/<id>/ (default results)")
    s.add_argument("--operator-token", default=None,
                   help="token operators must present (metadata 'authorization: Bearer "
                        "TOKEN'); without one, operator calls are accepted from this "
                        "machine only. Also EUCHRE_OPERATOR_TOKEN")
    add_http_flags(s, "tournaments, standings, recent games and their replays")
    add_tls_flags(s)
    s.add_argument("--upload-max-mib", type=int, default=DEFAULT_MAX_BYTES >> 20,
                   metavar="MIB",
                   help="the largest bundle a hosted bot may be submitted as (ctl submit), "
                        f"in MiB (default {DEFAULT_MAX_BYTES >> 20})")
    s.add_argument("--upload-reserve-mib", type=int, default=DEFAULT_DISK_RESERVE >> 20,
                   metavar="MIB",
                   help="the free disk, in MiB, a submission must leave beside its bundle "
                        "and the most it may unpack to; one that would leave less is "
                        f"refused (default {DEFAULT_DISK_RESERVE >> 20})")
    s.add_argument("--build-seconds", type=float, default=BuildPolicy().build_seconds,
                   metavar="SECONDS",
                   help="a hosted bot's build is stopped, and fails, after this many "
                        f"seconds (default {BuildPolicy().build_seconds:g})")
    s.add_argument("--grace", type=float, default=2.0,
                   help="seconds running games get to finish on shutdown (default 2, so "
                        "that a Ctrl-C stops the referee within a few seconds)")
    s.set_defaults(handler=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    tls = server_tls(args.tls_cert, args.tls_key)
    check_listen(args.host, args.port)
    if args.http_port is not None:
        check_listen(args.http_host, args.http_port)
    writable_folder(Path(args.log_dir), "--log-dir")
    writable_folder(Path(args.output), "--output")
    if args.upload_max_mib < 1:
        raise ConfigError("--upload-max-mib", f"must be at least 1; got {args.upload_max_mib}")
    if args.upload_reserve_mib < 0:
        raise ConfigError("--upload-reserve-mib",
                          f"must be at least 0; got {args.upload_reserve_mib}")
    if not args.build_seconds > 0:
        raise ConfigError("--build-seconds", f"must be > 0; got {args.build_seconds:g}")
    long_running()
    return asyncio.run(_serve(args, tls))


async def _serve(args: argparse.Namespace, tls: ServerTLS | None) -> int:
    """Serve until SIGINT or SIGTERM, then shut down gracefully: health turns
    NOT_SERVING, new bots are refused, running games get the grace period to finish and
    are then interrupted, connected bots are told, and bot processes are stopped."""
    from harness.tournament.hosted import ServeHosting
    from harness.tournament.live_site import LiveServer
    from harness.tournament.service import TournamentService

    token = operator_token(args, tls)
    arena = Arena(log_dir=Path(args.log_dir), host=args.host, port=args.port,
                  shutdown_grace=args.grace, tls=tls)
    arena.server.operator_token = token
    await arena.server.start()
    hosting = ServeHosting(Path(args.output), BuildPolicy(build_seconds=args.build_seconds),
                           max_bytes=args.upload_max_mib << 20,
                           disk_reserve=args.upload_reserve_mib << 20)
    service = TournamentService(arena, Path(args.output), hosting=hosting)
    arena.server.tournaments = service
    live = (LiveServer(service, args.http_host, args.http_port)
            if args.http_port is not None else None)
    stop = asyncio.Event()
    with on_signals(lambda signum: stop.set()):
        try:
            if live is not None:
                print(f"live page on {await live.start()}", file=sys.stderr)
            print(f"tournaments go to {Path(args.output) / '<id>'}/ (results.sqlite, "
                  f"report.md, summary.json, games.jsonl, logs/)", file=sys.stderr)
            secure = " with TLS" if tls is not None else ""
            print(f"referee listening on {arena.server.address}{secure} (Ctrl-C to stop)",
                  file=sys.stderr, flush=True)
            await stop.wait()
            running = service.running()
        finally:
            await arena.close()
            if live is not None:
                await live.stop()
    print(stopped_line(service, running, Path(args.output)), file=sys.stderr)
    return 0


def stopped_line(service: TournamentService, running: list[str], output: Path) -> str:
    """What a stopped referee kept: the games of each tournament it interrupted."""
    if not running:
        return "referee stopped; no tournament was running"
    kept = ", ".join(f"{tid!r} with {games(service.stored_games(tid))}" for tid in running)
    return (f"referee stopped: interrupted {kept} stored under {output}/; `euchre-harness "
            f"ctl resume ID` on a running referee continues one")
