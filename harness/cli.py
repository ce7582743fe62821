"""The ``euchre-harness`` command line.

    euchre-harness run [CONFIG] [--set KEY=VALUE ...]   a tournament (default: the sample bots)
    euchre-harness match --bot NAME=COMMAND ...          N games between a few bots
    euchre-harness serve                                 a referee for remote bots and operators
    euchre-harness ratings [STORE]                       recompute the tables from a results store
    euchre-harness replay GAME [--store STORE]           show a stored game hand by hand
    euchre-harness sprt --candidate A --baseline B ...   a head-to-head SPRT
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.errors import HarnessError
from harness.referee.arena import Arena
from harness.referee.outcome import FaultPolicy, GameResult, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.seating import match_seats, match_seed
from harness.rules.config import RulesConfig
from harness.tournament.cli import port_number


def parse_bot(spec: str) -> Entrant:
    """``NAME=COMMAND`` for a local bot (``{python}`` expands to this interpreter), or
    ``NAME@remote=TOKEN[,TOKEN...]`` for a remote bot that connects by itself."""
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise HarnessError(f"--bot takes NAME=COMMAND or NAME@remote=TOKEN; got {spec!r}")
    if name.endswith("@remote"):
        return Entrant(name.removesuffix("@remote"), None,
                       tuple(t for t in rest.split(",") if t))
    try:
        words = shlex.split(rest)
    except ValueError as e:
        raise HarnessError(f"--bot {name}: cannot split the command ({e})") from None
    argv = [a.replace("{python}", sys.executable) for a in words]
    return Entrant(name, BotCommand(tuple(argv)))


def parse_rules(form: str, deck: str, target: int | None, options: Sequence[str]) -> RulesConfig:
    data: dict[str, object] = {"form": form, "deck": deck}
    if target is not None:
        data["target"] = target
    for opt in options:
        key, sep, value = opt.partition("=")
        if not sep:
            raise HarnessError(f"--rule takes KEY=VALUE; got {opt!r}")
        low = value.strip().lower()
        data[key.strip()] = (True if low == "true" else False if low == "false"
                             else int(low) if low.isdigit() else value.strip())
    return RulesConfig.from_dict(data)


def describe(result: GameResult, index: int) -> str:
    faults = "; ".join(f"{f.bot}@{f.seat} {f.kind.value}" for f in result.faults) or "-"
    if result.winner is None:
        who = "no result"
    else:
        winners = sorted({result.seats[s] for s in range(len(result.seats))
                          if result.places[s] == 1})
        who = " & ".join(winners)
    score = "-".join(str(s) for s in result.scores)
    return (f"game {index + 1:>3}  {' '.join(result.seats):<40} {result.termination.value:<11} "
            f"winner {who:<12} score {score:<8} hands {result.hands:<3} faults {faults}")


async def _match(args: argparse.Namespace) -> int:
    rules = parse_rules(args.form, args.deck, args.target, args.rule)
    entrants = [parse_bot(b) for b in args.bot]
    names = [e.name for e in entrants]
    tc = TimeControl.parse(args.tc)
    policy = FaultPolicy.parse(args.policy)
    match_seats(rules.form, names, 0)  # validates the number of bots
    log_dir = Path(args.log_dir)
    wins = dict.fromkeys(names, 0)
    results = []
    async with Arena(log_dir=log_dir, host=args.host, port=args.port) as arena:
        for e in entrants:
            arena.add(e, max(1, match_seats(rules.form, names, 0).count(e.name)), rules)
        print(f"referee on {arena.server.address}; {args.games} game(s) of {rules.form.value}, "
              f"deck {rules.deck.value}, target {rules.target}, tc {tc}, policy {policy}",
              file=sys.stderr)
        for i in range(args.games):
            seats = match_seats(rules.form, names, i)
            seed = match_seed(args.seed, i, rules.form, len(names))
            result = await arena.play(f"match-{args.seed}-{i + 1}", rules, seed, seats,
                                      time_control=tc, policy=policy)
            results.append(result)
            for name in {seats[s] for s, place in enumerate(result.places) if place == 1}:
                wins[name] += 1
            if args.json:
                print(json.dumps(result.record, separators=(",", ":")))
            else:
                print(describe(result, i), flush=True)
    if not args.json:
        print("wins: " + ", ".join(f"{n} {w}" for n, w in wins.items()))
    return 0


async def _serve(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM, then shut down gracefully: health turns
    NOT_SERVING, new bots are refused, running games get the grace period to finish and
    are then interrupted, connected bots are told, and bot processes are stopped."""
    from harness.tournament.service import TournamentService

    token = args.operator_token or os.environ.get("EUCHRE_OPERATOR_TOKEN") or None
    if token is None and args.host not in ("127.0.0.1", "localhost", "::1"):
        print("note: no operator token; operator calls are accepted from this machine only "
              "(set --operator-token or EUCHRE_OPERATOR_TOKEN to allow others)",
              file=sys.stderr)
    arena = Arena(log_dir=Path(args.log_dir), host=args.host, port=args.port,
                  shutdown_grace=args.grace)
    arena.server.operator_token = token
    await arena.server.start()
    arena.server.tournaments = TournamentService(arena, Path(args.output))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"referee listening on {arena.server.address} (Ctrl-C to stop)", file=sys.stderr)
    try:
        await stop.wait()
        print("shutting down", file=sys.stderr)
    finally:
        await arena.close()
    return 0


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="euchre-harness", description=__doc__.split("\n")[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="log what the referee does")
    sub = ap.add_subparsers(dest="command", required=True)

    m = sub.add_parser("match", help="play games between a few bots and print the results")
    m.add_argument("--bot", action="append", required=True, metavar="NAME=COMMAND",
                   help="a local bot (repeat per bot); NAME@remote=TOKEN,... for a remote one")
    m.add_argument("--games", type=positive, default=2)
    m.add_argument("--form", default="four-handed",
                   help="four-handed (default), two-handed or cutthroat")
    m.add_argument("--deck", default="24", help="24 (default), 32 or 25")
    m.add_argument("--target", type=int, default=None, help="points to win (default 10)")
    m.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option, e.g. stick_the_dealer=true (see README)")
    m.add_argument("--tc", default="1.0+10", help="seconds per decision + bank (default 1.0+10)")
    m.add_argument("--policy", default="forfeit", help="forfeit (default) or strikes[:N]")
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--host", default="127.0.0.1")
    m.add_argument("--port", type=port_number, default=0, help="0 = any free port")
    m.add_argument("--log-dir", default="results/logs", help="bot stdout/stderr logs")
    m.add_argument("--json", action="store_true", help="print each game record as JSON")

    s = sub.add_parser("serve", help="run a referee for remote bots and operator calls")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=port_number, default=50051)
    s.add_argument("--log-dir", default="results/logs")
    s.add_argument("--output", default="results", help="where tournaments store results")
    s.add_argument("--operator-token", default=None,
                   help="token operators must present (metadata 'authorization: Bearer "
                        "TOKEN'); without one, operator calls are accepted from this "
                        "machine only. Also EUCHRE_OPERATOR_TOKEN")
    s.add_argument("--grace", type=float, default=5.0,
                   help="seconds running games get to finish on shutdown (default 5)")

    from harness.tournament import cli as tcli
    tcli.add_commands(sub)
    from harness import cli_ladder
    cli_ladder.register(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> None:
    ap = build_parser()
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s")
    try:
        if args.command == "match":
            code = asyncio.run(_match(args))
        elif args.command == "serve":
            code = asyncio.run(_serve(args))
        else:
            code = args.handler(args)
    except HarnessError as e:
        print(f"euchre-harness: error: {e}", file=sys.stderr)
        code = 2
    except OSError as e:  # an output or log folder that cannot be written, ...
        print(f"euchre-harness: error: {e}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("euchre-harness: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)
