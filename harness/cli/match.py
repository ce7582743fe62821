"""``euchre-harness match --bot NAME=COMMAND ...``: a few games between one to four bots.

A bot that fails to start ``--max-startup-failures`` games in a row (a typo in its
command) stops the match with :class:`StartupFailuresError`, as it stops ``run``: one
line naming the bot, the reason and the first lines of its log (exit status 2)."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cli.common import (
    check_listen,
    on_signals,
    port_number,
    split_assignment,
    writable_folder,
)
from harness.errors import ConfigError, HarnessError
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.seating import match_seats, match_seed
from harness.rules.config import RulesConfig
from harness.tournament.config import rules_from_table
from harness.tournament.options import default, parse_text
from harness.tournament.runner import StartupFailuresError, startup_failures_message

DEFAULT_GAMES = 2


def register(sub: Any) -> None:
    m = sub.add_parser("match", help="play games between a few bots and print the results",
                       description="Play a few games between one to four bots and print each "
                                   "result (winner, score, hands, faults).")
    m.add_argument("--bot", action="append", required=True, metavar="NAME=COMMAND",
                   help="a local bot (repeat per bot; {python} is this interpreter); "
                        "NAME@remote=TOKEN,... for a remote one")
    m.add_argument("--games", type=int, default=DEFAULT_GAMES,
                   help=f"games to play (default {DEFAULT_GAMES})")
    m.add_argument("--form", default=RulesConfig().form.value,
                   help="four-handed (default), two-handed or cutthroat")
    m.add_argument("--deck", default=RulesConfig().deck.value, help="24 (default), 32 or 25")
    m.add_argument("--target", type=int, default=None,
                   help=f"points to win (default {RulesConfig().target})")
    m.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option, e.g. stick_the_dealer=true (see README)")
    m.add_argument("--tc", default=str(TimeControl()),
                   help=f"seconds per decision + bank (default {TimeControl()})")
    m.add_argument("--policy", default=str(FaultPolicy()),
                   help=f"{FaultPolicy()} (default) or strikes[:N]")
    m.add_argument("--seed", type=int, default=1, help="derives every deal (default 1)")
    m.add_argument("--host", default="127.0.0.1",
                   help="where the referee listens (default loopback)")
    m.add_argument("--port", type=port_number, default=0,
                   help="the referee's port (default 0: any free port)")
    m.add_argument("--log-dir", default="results/logs",
                   help="bot stdout/stderr logs (default results/logs)")
    m.add_argument("--json", action="store_true", help="print each game record as JSON")
    limit = default("max_startup_failures")
    m.add_argument("--max-startup-failures", type=int, default=limit, metavar="N",
                   help="stop the match when one bot fails to start N games in a row "
                        f"(default {limit}; 0: never stop)")
    m.set_defaults(handler=cmd_match)


def parse_bot(spec: str) -> Entrant:
    """``NAME=COMMAND`` for a local bot (``{python}`` expands to this interpreter), or
    ``NAME@remote=TOKEN[,TOKEN...]`` for a remote bot that connects by itself."""
    name, rest = split_assignment(spec, "--bot", what="NAME=COMMAND or NAME@remote=TOKEN")
    if not rest:
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
    """The rules of ``--form``, ``--deck``, ``--target`` and each ``--rule KEY=VALUE``."""
    data: dict[str, object] = {"form": form, "deck": deck}
    if target is not None:
        data["target"] = target
    for opt in options:
        key, value = split_assignment(opt, "--rule")
        data[key] = parse_text(f"rules.{key}", value)
    return rules_from_table(data)


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


def cmd_match(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise ConfigError("--games", f"must be at least 1; got {args.games}")
    if args.max_startup_failures < 0:
        raise ConfigError("--max-startup-failures",
                          f"must be at least 0; got {args.max_startup_failures}")
    check_listen(args.host, args.port)
    writable_folder(Path(args.log_dir), "--log-dir")
    played: list[GameResult] = []
    caught: list[int] = []
    code = asyncio.run(_match(args, played, caught))
    if caught:
        print(f"interrupted: {len(played)} of {args.games} games played, each printed above "
              f"(a match stores nothing)", file=sys.stderr)
        return 128 + caught[0]
    return code


async def _match(args: argparse.Namespace, played: list[GameResult], caught: list[int]) -> int:
    """Play the match, appending each result to ``played``. SIGINT or SIGTERM (noted in
    ``caught``) ends the game in progress without a result and stops the match."""
    rules = parse_rules(args.form, args.deck, args.target, args.rule)
    entrants = [parse_bot(b) for b in args.bot]
    names = [e.name for e in entrants]
    tc = TimeControl.parse(args.tc)
    policy = FaultPolicy.parse(args.policy)
    match_seats(rules.form, names, 0)  # validates the number of bots
    log_dir = Path(args.log_dir)
    wins = dict.fromkeys(names, 0)
    streaks = dict.fromkeys(names, 0)  # games in a row each bot failed to start
    async with Arena(log_dir=log_dir, host=args.host, port=args.port) as arena:

        def interrupt(signum: int) -> None:
            caught.append(signum)
            arena.stop_games.set()

        for e in entrants:
            arena.add(e, max(1, match_seats(rules.form, names, 0).count(e.name)), rules)
        print(f"referee on {arena.server.address}; {args.games} game(s) of {rules.form.value}, "
              f"deck {rules.deck.value}, target {rules.target}, tc {tc}, policy {policy}",
              file=sys.stderr)
        with on_signals(interrupt):
            for i in range(args.games):
                seats = match_seats(rules.form, names, i)
                seed = match_seed(args.seed, i, rules.form, len(names))
                result = await arena.play(f"match-{args.seed}-{i + 1}", rules, seed, seats,
                                          time_control=tc, policy=policy)
                if caught:
                    return 0  # the game in progress has no result
                played.append(result)
                for name in {seats[s] for s, place in enumerate(result.places) if place == 1}:
                    wins[name] += 1
                if args.json:
                    print(json.dumps(result.record, separators=(",", ":")))
                else:
                    print(describe(result, i), flush=True)
                _check_startup(arena, result, streaks, args.max_startup_failures)
    if not args.json:
        print("wins: " + ", ".join(f"{n} {w}" for n, w in wins.items()))
    return 0


def _check_startup(arena: Arena, result: GameResult, streaks: dict[str, int],
                   limit: int) -> None:
    """Count each seated bot's start-up failures in a row; raise StartupFailuresError
    when one reaches ``limit`` (0: never)."""
    failed = {f.bot for f in result.faults if f.kind is FaultKind.STARTUP_FAILURE}
    for bot in set(result.seats):
        streaks[bot] = streaks[bot] + 1 if bot in failed else 0
        if limit and streaks[bot] >= limit:
            path, head = arena.log_head(bot)
            raise StartupFailuresError(startup_failures_message(
                bot, limit, result, (str(path) if path else "", head),
                stops="the match stops"))
