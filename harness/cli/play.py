"""``euchre-harness play``: a person takes one seat of a game, in this terminal, against
(or alongside) bots.

The referee (an :class:`~harness.referee.arena.Arena`), the bots' processes and the
person's seat all run from this one command. The person's seat is a
:class:`~harness.sdk.human.HumanBot`, an SDK bot that connects to the in-process referee with
a one-time token like any remote bot and answers from the keyboard. While the person
thinks, the referee waits for that seat, so the program has nothing else to do: the
prompt is read on the event loop's thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from harness.cli import COMMANDS
from harness.cli.match import parse_bot, parse_rules
from harness.errors import HarnessError, HumanQuit
from harness.referee.arena import Arena
from harness.referee.outcome import GameResult, Termination, TimeControl
from harness.referee.pool import Entrant
from harness.rules.config import RulesConfig
from harness.sdk import run_async
from harness.sdk.human import HumanBot

DEFAULT_BOT = "heuristic={python} -m sample_bots.heuristic_bot"
# "No clock": one decision may take 30 days (the protocol's millisecond counts are 32-bit).
NO_CLOCK = TimeControl(per_decision=30 * 24 * 3600.0, bank=0.0)


def register(sub: Any) -> None:
    """Add the ``play`` sub-command to an ``add_subparsers()`` object."""
    p = sub.add_parser("play", help=COMMANDS["play"],
                       description="Take one seat of a game in this terminal; bots fill "
                                   "the other seats.")
    p.add_argument("--form", default="four-handed",
                   help="four-handed (default), two-handed or cutthroat")
    p.add_argument("--deck", default="24", help="24 (default), 32 or 25")
    p.add_argument("--target", type=int, default=None, help="points to win (default 10)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option, e.g. stick_the_dealer=true (see README)")
    p.add_argument("--seat", type=int, default=0,
                   help="your seat, 0 to players-1 (default 0)")
    p.add_argument("--bot", action="append", default=[], metavar="NAME=COMMAND",
                   help="a bot for the other seats, in seat order after yours; repeat "
                        "for more, the list repeats if short (default: the heuristic "
                        "sample bot in every other seat)")
    p.add_argument("--name", default="you", help="your name in the game (default 'you')")
    p.add_argument("--seed", type=int, default=None,
                   help="the deal seed (default: a new one, printed at the end)")
    p.add_argument("--tc", default=None,
                   help="a clock for every seat, PER+BANK seconds, as for match; a late "
                        "answer forfeits (default: no clock)")
    p.add_argument("--log-dir", default=None,
                   help="keep the bots' stdout/stderr here (default: a temporary folder)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return asyncio.run(play(args))


def clock(tc: str | None) -> TimeControl:
    """``--tc``: none means no clock (people think at their own pace)."""
    return NO_CLOCK if tc is None else TimeControl.parse(tc)


def seat_plan(rules: RulesConfig, seat: int, human: str,
              bots: list[Entrant]) -> list[str]:
    """The entrant name in each seat: the person in ``seat``, the bots in order in the
    seats after it (the list repeats when there are fewer bots than seats)."""
    n = rules.players
    if not 0 <= seat < n:
        raise HarnessError(f"--seat must be 0 to {n - 1} for {rules.form.value}; got {seat}")
    if any(b.name == human for b in bots):
        raise HarnessError(f"a bot is named {human!r} like you: choose another --name")
    if any(b.remote for b in bots):
        raise HarnessError("play takes local bots only (NAME=COMMAND)")
    seats = [human] * n
    for k in range(n - 1):
        seats[(seat + 1 + k) % n] = bots[k % len(bots)].name
    return seats


async def play(args: argparse.Namespace) -> int:
    # A Ctrl-C at the prompt stops at once (asyncio's own handler would only cancel the
    # main task, which is blocked in the prompt until the person presses Enter).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rules = parse_rules(args.form, args.deck, args.target, args.rule)
    bots = list({e.name: e for e in map(parse_bot, args.bot or [DEFAULT_BOT])}.values())
    seats = seat_plan(rules, args.seat, args.name, bots)
    tc = clock(args.tc)
    seed = secrets.randbelow(1_000_000) if args.seed is None else args.seed
    with contextlib.ExitStack() as stack:
        log_dir = Path(args.log_dir) if args.log_dir else Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="euchre-play-")))
        print("Starting the bots...", file=sys.stderr, flush=True)
        result = await play_game(rules, seats, bots, args.name, seed, tc, log_dir)
    if result is None:
        print("You left the game.", file=sys.stderr)
        return 0
    if result.termination is not Termination.NORMAL:
        print(f"The game did not finish normally: {result.detail}", file=sys.stderr)
        return 1
    print(f"Deal seed {seed} (play the same cards again with --seed {seed}).")
    return 0


async def play_game(rules: RulesConfig, seats: list[str], bots: list[Entrant], human: str,
                    seed: int, tc: TimeControl, log_dir: Path) -> GameResult | None:
    """Play one game; None when the person quit."""
    token = secrets.token_urlsafe(24)
    counts = Counter(seats)
    bot = HumanBot()
    bot.name = human
    async with Arena(log_dir=log_dir) as arena:
        for entrant in bots:
            if counts[entrant.name]:
                arena.add(entrant, counts[entrant.name], rules)
        arena.add(Entrant(human, None, (token,)), 1, rules)
        person = asyncio.ensure_future(run_async(bot, arena.server.address, token,
                                                 reconnect=False))
        game = asyncio.ensure_future(arena.play(f"play-{seed}", rules, seed, seats,
                                                time_control=tc))
        try:
            await asyncio.wait((person, game), return_when=asyncio.FIRST_COMPLETED)
            if person.done() and not game.done():
                person.result()  # raises HumanQuit, or the error that ended the seat
                raise HarnessError("your seat lost its connection to the referee")
            result = game.result()
            if result.hands:  # the game began (no bot failed to start): let the seat show
                # its end before the referee shuts down
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(bot.over.wait(), 10.0)
            return result
        except HumanQuit:
            return None
        finally:
            for task in (game, person):
                task.cancel()
            await asyncio.gather(game, person, return_exceptions=True)
