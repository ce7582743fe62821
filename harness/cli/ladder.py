"""``euchre-harness ladder CONFIG [ACTION]``: run a standing ladder, or manage its
entrants and read its standings straight from its store.

    euchre-harness ladder examples/ladder.toml                      run it (Ctrl-C stops)
    euchre-harness ladder examples/ladder.toml register NAME [--owner WHO] [--concurrency N]
    euchre-harness ladder examples/ladder.toml new-version NAME
    euchre-harness ladder examples/ladder.toml rotate NAME | retire NAME | restore NAME
    euchre-harness ladder examples/ladder.toml lift NAME              end a bench
    euchre-harness ladder examples/ladder.toml standings [--latest]

The configuration is a tournament file (rules, ``tc``, ``fault_policy``,
``partnerships``, ``duplicate``, ``seed``, ``concurrency`` = deal sets at once,
``output``, and ``[ladder]`` for how it pairs and benches bots); its ``[[bot]]`` entries
with a ``command`` are the house bots. With ``--workers N`` or ``--scheduler ADDRESS``
(or ``[cluster]``) the sets of house bots alone are played on a Dask cluster. The store is
``<output>/ladder.sqlite``. The actions work while the ladder runs (new registrations are
picked up within a second). ``register``, ``new-version`` and ``rotate`` print the
token once, on stdout, and nowhere else.

A running ladder also serves its operator API (``euchre.v1.LadderService``) on its
address: ``euchre-harness ctl register``, ``ctl standings``, ``ctl games``, ``ctl
ladder-watch`` and the rest work from any machine given ``--operator-token`` (or
``EUCHRE_OPERATOR_TOKEN``), and from this one without. With ``--http-port`` it also
serves a read-only live page (standings, recent games and their replays) on that port.
``euchre-harness ctl submit NAME PATH`` uploads a hosted bot, which the ladder builds and
runs in a box (docs/hosting.md).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

from harness.cli import COMMANDS
from harness.cli._ctl_ladder import add_bot_actions
from harness.cli._ladder_standings import standings_table
from harness.cli._tournament import add_option_flags, overrides
from harness.cli.common import (
    add_http_flags,
    add_listen_flags,
    add_tls_flags,
    check_listen,
    default_owner,
    games,
    long_running,
    on_signals,
    operator_token,
)
from harness.competition.policies import ladder_policies
from harness.errors import ConfigError
from harness.ladder.hosting import BuildPolicy
from harness.ladder.matchmaking import Matchmaker
from harness.ladder.quarantine import Quarantine
from harness.ladder.ratings import LadderRatings
from harness.ladder.registry import Registry, Token
from harness.ladder.runtime import LadderRuntime
from harness.ladder.service import ladder_standings
from harness.ladder.settings import LadderSettings
from harness.ladder.uploads import Uploads
from harness.protocol.ladder import standing_to_dict
from harness.protocol.tls import server_tls
from harness.storage.ladder import LadderStore
from harness.storage.results import ResultsStore
from harness.tournament.config import TournamentConfig, load_config

__all__ = ["STORE_NAME", "register", "settings_from"]

STORE_NAME = "ladder.sqlite"


def register(sub: Any) -> None:
    """Add the ``ladder`` command to the CLI's subparsers."""
    p = sub.add_parser("ladder", help=COMMANDS["ladder"],
                       description=(__doc__ or "").replace("``", "`"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", type=Path, help="the ladder's configuration (TOML)")
    add_listen_flags(p, port=50051, remote=True)
    add_tls_flags(p)
    add_http_flags(p, "standings, recent games and their replays")
    add_option_flags(p, "ladder")
    p.add_argument("--operator-token", default=None,
                   help="token operators must present to the ladder's operator API "
                        "(euchre-harness ctl); without one, operator calls are accepted "
                        "from this machine only. Also EUCHRE_OPERATOR_TOKEN")
    actions = p.add_subparsers(dest="action", metavar="ACTION",
                               help="manage the ladder's bots (default: run the ladder)")

    def action(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = actions.add_parser(
            name, help=text, description=text[0].upper() + text[1:] + ".")
        return parser

    add_bot_actions(action)
    p.set_defaults(handler=handle)


def settings_from(config: TournamentConfig, *, host: str, port: int) -> LadderSettings:
    """The ladder settings a tournament-schema configuration describes."""
    remote = [b.name for b in config.bots if b.remote]
    if remote:
        raise ConfigError("bot", f"a ladder's bots register with `ladder CONFIG register`; "
                                 f"remove the token entries {', '.join(remote)}")
    matchmaking, quarantine = ladder_policies(config.ladder)  # checked when it was read
    house_vs_house = config.ladder["house_vs_house"]
    if not house_vs_house and (config.scheduler or config.workers):
        raise ConfigError("ladder.house_vs_house", "a Dask cluster plays only sets of house "
                                                   "bots, so with house_vs_house = false it "
                                                   "would have nothing to do; set one or "
                                                   "the other")
    retry = config.ladder["cluster_retry_seconds"]
    build = BuildPolicy(build_seconds=config.ladder["build_seconds"])
    settings = LadderSettings(
        matchmaking=matchmaking, quarantine=quarantine, cluster_retry_seconds=retry,
        house_vs_house=house_vs_house,
        upload_max_bytes=config.ladder["upload_max_mib"] << 20, build=build,
        upload_reserve_bytes=config.ladder["upload_reserve_mib"] << 20,
        submissions_per_day=config.ladder["submissions_per_day"],
        store=config.output / STORE_NAME, log_dir=config.output / "logs",
        rules=config.rules, time_control=config.time_control,
        fault_policy=config.fault_policy, partnerships=config.partnerships,
        duplicate=config.duplicate, seed=config.seed, concurrency=config.concurrency,
        ladder_id=config.id, host=host, port=port, scheduler=config.scheduler,
        workers=config.workers)
    needed = Matchmaker(config.rules.form, partnerships=config.partnerships).bots_per_set
    if config.on_cluster and len(config.bots) < needed:
        raise ConfigError("cluster.scheduler" if config.scheduler else "cluster.workers",
                          f"a ladder plays only sets of house bots alone on a cluster, and "
                          f"one needs {needed} house bots ([[bot]] entries); this file has "
                          f"{len(config.bots)}")
    # Enough seats for a house bot to sit in every set that may run at once (its
    # processes start only when a game needs them).
    seats = settings.seats_per_bot * config.concurrency
    return dataclasses.replace(settings, house=tuple((b.entrant(), seats)
                                                     for b in config.bots))


def _show_token(name: str, token: Token) -> None:
    print(f"{name}: {token.reveal()}")
    print("keep this token: it is shown only once", file=sys.stderr)


def _standings(store: LadderStore, settings: LadderSettings, latest: bool) -> None:
    with ResultsStore(settings.store) as results:
        rows = list(results.games(settings.ladder_id))
    ratings = LadderRatings()
    ratings.add_games(rows)
    ratings.refresh(force=True)
    standings = ladder_standings(ratings, Registry(store), Quarantine(store),
                                 Uploads(store).states(), latest_only=latest)
    print(standings_table(standing_to_dict(s) for s in standings))


def _act(args: argparse.Namespace, settings: LadderSettings) -> int:
    with LadderStore(settings.store) as store:
        registry = Registry(store)
        if args.action == "register":
            entrant, token = registry.register(
                args.name, args.owner or default_owner(), description=args.description,
                concurrency=settings.concurrency_for(args.concurrency))
            _show_token(entrant.name, token)
        elif args.action == "new-version":
            entrant, token = registry.new_version(args.name)
            _show_token(entrant.name, token)
        elif args.action == "rotate":
            _show_token(args.name, registry.rotate(args.name))
        elif args.action == "retire":
            registry.retire(args.name)
        elif args.action == "restore":
            registry.restore(args.name)
        elif args.action == "lift":
            registry.get(args.name)
            if Quarantine(store).lift(args.name) is None:
                print(f"{args.name} is not benched", file=sys.stderr)
        else:
            _standings(store, settings, args.latest)
    return 0


def _run(settings: LadderSettings, http: tuple[str, int] | None) -> int:
    from harness.ladder.live_site import LadderLiveServer

    async def main() -> None:
        stop = asyncio.Event()

        def listening(address: str) -> None:
            cluster = runtime.cluster
            print(f"ladder on {address}{' with TLS' if settings.tls else ''}; store "
                  f"{settings.store}{f'; house sets on {cluster.where}' if cluster else ''}",
                  file=sys.stderr, flush=True)

        runtime = LadderRuntime(settings, stop=stop, on_listen=listening)
        live = None if http is None else LadderLiveServer(runtime, *http)
        with on_signals(lambda signum: stop.set()):
            try:
                if live is not None:
                    print(f"live page on {await live.start()}", file=sys.stderr, flush=True)
                await runtime.run()
                kept = runtime.results.count_games(settings.ladder_id)
                print(f"ladder stopped: {games(kept)} stored in {settings.store}; run the "
                      f"same command to go on", file=sys.stderr, flush=True)
            finally:
                if live is not None:
                    await live.stop()
                runtime.close()

    asyncio.run(main())
    return 0


def handle(args: argparse.Namespace) -> int:
    settings = settings_from(load_config(args.config, overrides(args), for_ladder=True),
                             host=args.host, port=args.port)
    if args.action is None:
        tls = server_tls(args.tls_cert, args.tls_key)
        check_listen(args.host, args.port)  # before the store is created
        token = operator_token(args, tls)
        http = None
        if args.http_port is not None:
            check_listen(args.http_host, args.http_port)
            http = (args.http_host, args.http_port)
        long_running()
        return _run(dataclasses.replace(settings, operator_token=token, tls=tls), http)
    return _act(args, settings)
