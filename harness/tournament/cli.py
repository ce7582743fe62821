"""The tournament sub-commands of ``euchre-harness``: run, ratings, replay, sprt."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.progress import Progress
from harness.store import ResultsStore
from harness.tournament.config import TournamentConfig, default_config, load_config
from harness.tournament.results import tournament_report
from harness.tournament.runner import RunState, TournamentRunner, store_path


def add_commands(sub: Any) -> None:
    r = sub.add_parser("run", help="run a tournament (default: the sample bots) and print the "
                                   "standings")
    r.add_argument("config", nargs="?", help="a TOML file (see examples/tournament.toml); "
                                             "none = the built-in sample-bots tournament")
    _common(r)
    r.set_defaults(handler=cmd_run)

    s = sub.add_parser("sprt", help="a head-to-head SPRT between two bots")
    s.add_argument("config", nargs="?", help="a TOML file with the bots (default: sample bots)")
    s.add_argument("--candidate", required=True)
    s.add_argument("--baseline", required=True)
    s.add_argument("--elo0", type=float, default=0.0)
    s.add_argument("--elo1", type=float, default=10.0)
    s.add_argument("--alpha", type=float, default=0.05)
    s.add_argument("--beta", type=float, default=0.05)
    s.add_argument("--max-pairs", type=int, default=2000)
    _common(s)
    s.set_defaults(handler=cmd_sprt)

    g = sub.add_parser("ratings", help="recompute the tables from a results store")
    g.add_argument("store", nargs="?", default=str(store_path(Path("results"))))
    g.add_argument("--tournament", help="tournament id (default: every one in the store)")
    g.add_argument("--anchor", help="fix this bot's rating (default: mean 0)")
    g.add_argument("--anchor-rating", type=float, default=0.0)
    g.add_argument("--markdown", action="store_true")
    g.set_defaults(handler=cmd_ratings)

    p = sub.add_parser("replay", help="show a stored game hand by hand")
    p.add_argument("game", help="a game key (e.g. rr/0000/000/t0), TOURNAMENT/KEY, or row id")
    p.add_argument("--store", default=str(store_path(Path("results"))))
    p.set_defaults(handler=cmd_replay)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a configuration key, e.g. --set rules.form=cutthroat")
    p.add_argument("--games", help="deal sets per pairing")
    p.add_argument("--concurrency", help="games at once (default: number of cores)")
    p.add_argument("--output", help="results folder (default: results)")
    p.add_argument("--seed")
    p.add_argument("--tc", help="time control, seconds per decision + bank, e.g. 1.0+10")
    p.add_argument("--host", default="127.0.0.1",
                   help="where the referee listens (remote bots dial it; default loopback)")
    p.add_argument("--port", type=port_number, default=0, help="0 = any free port")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--markdown", action="store_true", help="print the report as Markdown")


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise HarnessError(f"--set takes KEY=VALUE; got {item!r}")
        out[key.strip()] = value.strip()
    for key in ("games", "concurrency", "output", "seed", "tc"):
        value = getattr(args, key)
        if value is not None:
            out[key] = str(value)
    return out


def _load(args: argparse.Namespace, extra: dict[str, str] | None = None) -> TournamentConfig:
    overrides = {**(extra or {}), **_overrides(args)}
    if args.config:
        return load_config(args.config, overrides)
    if overrides:
        return load_config(None, overrides)
    return default_config()


def port_number(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535; got {value}")
    return value


def run_tournament(config: TournamentConfig, *, quiet: bool = False,
                   host: str = "127.0.0.1", port: int = 0) -> RunState:
    """Run to completion with a progress line on stderr; Ctrl-C / SIGTERM stop cleanly
    (finished games are kept; running ones are played again on resume)."""
    progress = Progress(config.make_format().total(), enabled=not quiet)

    def report(state: RunState) -> None:
        progress.show(state)

    async def main() -> RunState:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def first_signal() -> None:
            # The first Ctrl-C lets running games finish (they are stored); the second
            # stops at once (running games are played again on resume).
            stop.set()
            loop.remove_signal_handler(signal.SIGINT)
            print("\nstopping: finishing the games in progress (Ctrl-C again to stop now)",
                  file=sys.stderr)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, first_signal)
        runner = TournamentRunner(
            config, on_progress=report, stop=stop, host=host, port=port,
            on_listen=lambda address: print(f"referee on {address}", file=sys.stderr))
        try:
            return await runner.run()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    print(f"tournament {config.id!r}: {config.format}, {config.rules.form.value}, "
          f"deck {config.rules.deck.value}, bots {', '.join(b.name for b in config.bots)}; "
          f"results in {config.output}/", file=sys.stderr)
    try:
        state = asyncio.run(main())
    finally:  # the line ends before any error is printed
        progress.close()
    if not state.finished:
        print("stopped before the end: run the same command again to resume", file=sys.stderr)
    return state


def cmd_run(args: argparse.Namespace) -> int:
    config = _load(args)
    state = run_tournament(config, quiet=args.quiet, host=args.host, port=args.port)
    print(tournament_report(config, markdown=args.markdown))
    return 0 if state.finished else 1


def cmd_sprt(args: argparse.Namespace) -> int:
    extra = {"format": "sprt", "sprt.candidate": args.candidate,
             "sprt.baseline": args.baseline, "sprt.elo0": str(args.elo0),
             "sprt.elo1": str(args.elo1), "sprt.alpha": str(args.alpha),
             "sprt.beta": str(args.beta), "sprt.max_pairs": str(args.max_pairs),
             "id": f"sprt-{args.candidate}-vs-{args.baseline}",
             "name": f"SPRT {args.candidate} vs {args.baseline}"}
    config = _load(args, extra)
    state = run_tournament(config, quiet=args.quiet, host=args.host, port=args.port)
    print(tournament_report(config, markdown=args.markdown))
    return 0 if state.finished else 1


def cmd_ratings(args: argparse.Namespace) -> int:
    from harness.tournament.results import store_report

    path = _existing_store(args.store)
    with ResultsStore(path) as store:
        print(store_report(store, args.tournament, anchor=args.anchor,
                           anchor_rating=args.anchor_rating, markdown=args.markdown))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from harness.tournament.replay import render_game

    path = _existing_store(args.store)
    with ResultsStore(path) as store:
        row = store.find_game(args.game)
    if row is None:
        raise HarnessError(f"no game {args.game!r} in {path}")
    print(render_game(row))
    return 0


def _existing_store(text: str) -> Path:
    """A results store that exists (reading commands never create one)."""
    path = Path(text)
    if not path.is_file() or path.stat().st_size == 0:
        raise HarnessError(f"no results store at {path}")
    return path
