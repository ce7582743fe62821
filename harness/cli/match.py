"""``euchre-harness match --bot NAME=COMMAND ...``: a few games between one to four bots.

A bot that fails to start (a typo in its command) stops the match at once with
:class:`StartupFailuresError`: one line naming the bot, the reason and the end of its
log (exit status 2). With ``--max-startup-failures N`` it stops after N games in a row,
as ``run`` does, and the first failure of a streak is explained when it happens."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness import keep_secret
from harness.cli import COMMANDS
from harness.cli.common import (
    add_listen_flags,
    check_listen,
    on_signals,
    raise_open_file_limit,
    split_assignment,
    writable_folder,
)
from harness.competition.options import RULE_KINDS, parse_text
from harness.errors import ConfigError, HarnessError, StartupFailuresError, UnknownKeysError
from harness.referee.arena import Arena
from harness.referee.outcome import FaultKind, FaultPolicy, GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.seating import match_seats, match_seed
from harness.results.rows import StoredGame, to_row
from harness.rules.config import RulesConfig
from harness.rules.scoring import team_count
from harness.sandbox import BoxLimits
from harness.storage.lock import exclusive_writer
from harness.storage.results import GameRow, ResultsStore
from harness.tournament.config import rules_from_table
from harness.tournament.runner import startup_failure_reason, startup_failures_message

DEFAULT_GAMES = 2
MATCH_STORE = Path("results") / "matches.sqlite"


def register(sub: Any) -> None:
    m = sub.add_parser("match", help=COMMANDS["match"],
                       description="Play a few games between one to four bots and print each "
                                   "result (winner, score, hands, faults).")
    m.add_argument("--bot", action="append", required=True, metavar="NAME=COMMAND",
                   help="a local bot (repeat per bot; {python} is this interpreter); "
                        "NAME@remote=TOKEN,... for a remote one (a token written env:VAR "
                        "is read from the environment variable VAR)")
    m.add_argument("--box", action="append", default=[], metavar="NAME=FOLDER",
                   help="run local bot NAME in a box (docs/hosting.md) that shows it FOLDER "
                        "(read-only, its working directory), with the default limits")
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
                   help=f"seconds per decision + bank (default {TimeControl()}); "
                        f"PER+BANK/cpu charges boxed bots' CPU time")
    m.add_argument("--policy", default=str(FaultPolicy()),
                   help=f"{FaultPolicy()} (default) or strikes[:N]")
    m.add_argument("--seed", type=int, default=1, help="derives every deal (default 1)")
    add_listen_flags(m, port=0, log_dir="results/logs")
    m.add_argument("--json", action="store_true", help="print each game record as JSON")
    m.add_argument("--store", default=str(MATCH_STORE), metavar="PATH",
                   help=f"store the games here, for replay (default {MATCH_STORE}; each "
                        "match is a tournament named match-DATE-TIME)")
    m.add_argument("--max-startup-failures", type=int, default=1, metavar="N",
                   help="stop the match when one bot fails to start N games in a row "
                        "(default 1: at once; 0: never stop)")
    m.set_defaults(handler=cmd_match)


def parse_bot(spec: str) -> Entrant:
    """``NAME=COMMAND`` for a local bot (``{python}`` expands to this interpreter), or
    ``NAME@remote=TOKEN[,TOKEN...]`` for a remote bot that connects by itself; a token
    written ``env:VAR`` is the value of the environment variable ``VAR`` (a command line
    is shown to every user of the machine, the environment is not)."""
    name, rest = split_assignment(spec, "--bot", what="NAME=COMMAND or NAME@remote=TOKEN")
    if not rest:
        raise HarnessError(f"--bot takes NAME=COMMAND or NAME@remote=TOKEN; got {spec!r}")
    if name.endswith("@remote"):
        return Entrant(name.removesuffix("@remote"), None,
                       tuple(_token(name, t) for t in rest.split(",") if t))
    try:
        words = shlex.split(rest)
    except ValueError as e:
        raise HarnessError(f"--bot {name}: cannot split the command ({e})") from None
    argv = [a.replace("{python}", sys.executable) for a in words]
    return Entrant(name, BotCommand(tuple(argv)))


def _token(name: str, written: str) -> str:
    """A remote seat's token as ``--bot`` gives it: itself, or for ``env:VAR`` the value
    of ``VAR``."""
    if not written.startswith("env:"):
        return written
    variable = written.removeprefix("env:")
    keep_secret(variable)  # the seat's token: no bot this process starts may read it
    value = os.environ.get(variable, "")
    if not value:
        raise HarnessError(f"--bot {name}: the environment variable {variable!r} (for "
                           f"{written}) is not set")
    return value


def boxed(entrants: Sequence[Entrant], specs: Sequence[str]) -> list[Entrant]:
    """``entrants`` with each ``--box NAME=FOLDER`` applied: that local bot runs in a box
    with the default limits, FOLDER as its files and working directory."""
    folders = dict(split_assignment(spec, "--box", what="NAME=FOLDER") for spec in specs)
    out = []
    for e in entrants:
        folder = folders.pop(e.name, None)
        if folder is not None:
            if e.command is None:
                raise HarnessError(f"--box {e.name}: only a local bot runs in a box")
            e = Entrant(e.name, dataclasses.replace(
                e.command, cwd=str(Path(folder).resolve()), sandbox=BoxLimits()))
        out.append(e)
    if folders:
        raise HarnessError(f"--box names no --bot: {', '.join(sorted(folders))}")
    return out


def parse_rules(form: str, deck: str, target: int | None, options: Sequence[str]) -> RulesConfig:
    """The rules of ``--form``, ``--deck``, ``--target`` and each ``--rule KEY=VALUE``."""
    data: dict[str, object] = {"form": form, "deck": deck}
    if target is not None:
        data["target"] = target
    pairs = [split_assignment(opt, "--rule") for opt in options]
    unknown = [("", key, list(RULE_KINDS)) for key, _ in pairs if key not in RULE_KINDS]
    if unknown:
        raise UnknownKeysError(unknown, noun="rule option")
    for key, value in pairs:
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
    raise_open_file_limit()  # its port takes connections by a share of the limit
    writable_folder(Path(args.log_dir), "--log-dir")
    writable_folder(Path(args.store).parent, "--store")
    played: list[GameResult] = []
    caught: list[int] = []
    code = asyncio.run(_match(args, played, caught))
    if caught:
        print(f"interrupted: {len(played)} of {args.games} games played and stored in "
              f"{args.store}, each printed above (the game in progress has no result)",
              file=sys.stderr)
        return 128 + caught[0]
    return code


async def _match(args: argparse.Namespace, played: list[GameResult], caught: list[int]) -> int:
    """Play the match, storing each result and appending it to ``played``. SIGINT or
    SIGTERM (noted in ``caught``) ends the game in progress without a result and stops
    the match."""
    rules = parse_rules(args.form, args.deck, args.target, args.rule)
    entrants = boxed([parse_bot(b) for b in args.bot], args.box)
    names = [e.name for e in entrants]
    tc = TimeControl.parse(args.tc)
    policy = FaultPolicy.parse(args.policy)
    match_seats(rules.form, names, 0)  # validates the number of bots
    log_dir = Path(args.log_dir)
    wins = dict.fromkeys(names, 0)
    streaks = dict.fromkeys(names, 0)  # games in a row each bot failed to start
    store_path = Path(args.store)
    with exclusive_writer(store_path, "match"), ResultsStore(store_path) as store:
        match_id = _new_match_id(store)
        store.ensure_tournament(match_id, match_id, {
            "format": "match", "bots": names, "rules": rules.to_dict(), "games": args.games,
            "seed": args.seed, "tc": str(tc), "fault_policy": str(policy)})
        try:
            await _play(args, rules, entrants, tc, policy, log_dir, wins, streaks,
                        lambda key, seats, seed, result: store.record_game(
                            _row(match_id, key, seats, seed, rules, result)), played, caught)
        finally:
            store.set_status(match_id, "interrupted" if caught else "finished")
    if caught:
        return 0
    if not args.json:
        print("wins: " + ", ".join(f"{n} {w}" for n, w in wins.items()))
        print(f"replay a game: euchre-harness replay {match_id}/g1 --store {store_path}")
    return 0


def _new_match_id(store: ResultsStore) -> str:
    """``match-YYYYMMDD-HHMMSS`` (UTC), with a suffix if a match started in that second."""
    base = "match-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    known = set(store.tournament_ids())
    candidates = (base if n == 1 else f"{base}-{n}" for n in range(1, len(known) + 2))
    return next(c for c in candidates if c not in known)


def _row(match_id: str, key: str, seats: Sequence[str], seed: int, rules: RulesConfig,
         result: GameResult) -> GameRow:
    """The stored row of a match game: one rating side per team, its distinct bots."""
    teams = team_count(rules.form)
    sides = tuple(tuple(dict.fromkeys(seats[s] for s in range(len(seats)) if s % teams == t))
                  for t in range(teams))
    return to_row(match_id, StoredGame(key, tuple(seats), seed, key, 0, sides), result)


async def _play(args: argparse.Namespace, rules: RulesConfig, entrants: list[Entrant],
                tc: TimeControl, policy: FaultPolicy, log_dir: Path, wins: dict[str, int],
                streaks: dict[str, int],
                record: Callable[[str, Sequence[str], int, GameResult], object],
                played: list[GameResult], caught: list[int]) -> None:
    names = [e.name for e in entrants]
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
                if caught or result.termination is Termination.INTERRUPTED:
                    return  # the game in progress has no result
                record(f"g{i + 1}", seats, seed, result)
                played.append(result)
                for name in {seats[s] for s, place in enumerate(result.places) if place == 1}:
                    wins[name] += 1
                if args.json:
                    print(json.dumps(result.record, separators=(",", ":")))
                else:
                    print(describe(result, i), flush=True)
                _check_startup(result, streaks, args.max_startup_failures)


def _check_startup(result: GameResult, streaks: dict[str, int], limit: int) -> None:
    """Count each seated bot's start-up failures in a row: raise StartupFailuresError
    when one reaches ``limit`` (0: never); explain the first of a streak on stderr."""
    failed = {f.bot for f in result.faults if f.kind is FaultKind.STARTUP_FAILURE}
    for bot in set(result.seats):
        streaks[bot] = streaks[bot] + 1 if bot in failed else 0
        if limit and streaks[bot] >= limit:
            raise StartupFailuresError(startup_failures_message(
                bot, limit, result, stops="the match stops"))
        if streaks[bot] == 1:
            print(f"bot {bot!r} did not start (it forfeits the game): "
                  f"{startup_failure_reason(bot, result)}", file=sys.stderr, flush=True)
