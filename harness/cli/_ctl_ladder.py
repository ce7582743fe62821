"""The ladder commands of ``euchre-harness ctl``, for a running ``euchre-harness ladder``
(its operator API, ``euchre.v1.LadderService``):

    euchre-harness ctl register NAME [--owner WHO] [--description TEXT] [--concurrency N]
    euchre-harness ctl new-version NAME      register NAME@N+1
    euchre-harness ctl rotate NAME           a new token (the old one stops working)
    euchre-harness ctl retire NAME | restore NAME | lift NAME
    euchre-harness ctl standings [--latest]  ratings, sweeps, benched bots with the reason
    euchre-harness ctl games [BOT] [--limit N]
    euchre-harness ctl ladder-watch          events live: games, ratings, connections, benches

``register``, ``new-version`` and ``rotate`` print the bot's token once, on stdout; no
other command prints a token.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from tabulate import tabulate

from harness.cli._ladder_standings import elo_text, standings_table
from harness.cli.common import default_owner
from harness.protocol import ladder as lp

__all__ = ["COMMANDS", "add_bot_actions", "add_commands"]

Metadata = Sequence[tuple[str, str]]


def add_bot_actions(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add the commands that manage a ladder's bots, the same for ``ctl`` (a running
    ladder) and ``ladder CONFIG`` (its store); ``command(name, help)`` makes a
    sub-parser."""
    r = command("register", "register a ladder bot and print its token once")
    r.add_argument("name", help="the bot's name (letters, digits, '.', '_', '-')")
    r.add_argument("--owner", default=None,
                   help="who runs the bot (default: your user name)")
    r.add_argument("--description", default="", help="a line about the bot")
    r.add_argument("--concurrency", type=int, default=None,
                   help="seats it may hold at once, one stream each (default: the seats "
                        "of one game, 2 for same-bot partnerships, else 1)")
    for name, text in (("new-version", "register the next version of a ladder bot "
                                       "(NAME@N+1) and print its token once"),
                       ("rotate", "give a ladder bot a new token, printed once; the old "
                                  "one stops working"),
                       ("retire", "stop a ladder bot from playing"),
                       ("restore", "bring a retired ladder bot back"),
                       ("lift", "end a ladder bot's bench")):
        command(name, text).add_argument("name", help="the bot's name")
    st = command("standings", "a ladder's standings")
    st.add_argument("--latest", action="store_true", help="only the newest version of a bot")


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add the ladder commands of ``ctl``; ``command(name, help)`` makes a sub-parser."""
    add_bot_actions(command)
    g = command("games", "a ladder bot's games, or the ladder's recent games, newest first")
    g.add_argument("bot", nargs="?", default="", help="the bot (default: every bot)")
    g.add_argument("--limit", type=int, default=20,
                   help="at most this many (default 20; 1000 at most)")
    command("ladder-watch", "follow a running ladder's events live (Ctrl-C stops)")


def _show_token(args: argparse.Namespace, bot: lp.LadderBot, token: str) -> int:
    if args.json:
        print(json.dumps({"name": bot.name, "token": token}))
    else:
        print(f"{bot.name}: {token}")
        print("keep this token: it is shown only once", file=sys.stderr)
    return 0


def _show_bot(args: argparse.Namespace, bot: lp.LadderBot, what: str) -> int:
    if args.json:
        print(json.dumps({"name": bot.name, "retired": bot.retired}))
    else:
        print(f"{bot.name} {what}")
    return 0


async def _register(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.RegisterBot(
        lp.RegisterBotRequest(name=args.name, owner=args.owner or default_owner(),
                              description=args.description,
                              concurrency=max(0, args.concurrency or 0)),
        metadata=md, timeout=args.timeout)
    return _show_token(args, answer.bot, answer.token)


async def _new_version(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.NewVersion(lp.NewVersionRequest(name=args.name), metadata=md,
                                   timeout=args.timeout)
    return _show_token(args, answer.bot, answer.token)


async def _rotate(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.RotateToken(lp.RotateTokenRequest(name=args.name), metadata=md,
                                    timeout=args.timeout)
    return _show_token(args, answer.bot, answer.token)


async def _retire(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.RetireBot(lp.RetireBotRequest(name=args.name), metadata=md,
                                  timeout=args.timeout)
    return _show_bot(args, answer.bot, "retired")


async def _restore(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.RestoreBot(lp.RestoreBotRequest(name=args.name), metadata=md,
                                   timeout=args.timeout)
    return _show_bot(args, answer.bot, "restored")


async def _lift(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.LiftBench(lp.LiftBenchRequest(name=args.name), metadata=md,
                                  timeout=args.timeout)
    if args.json:
        print(json.dumps({"name": args.name, "lifted": answer.lifted}))
    else:
        print(f"{args.name}: bench lifted" if answer.lifted else f"{args.name} is not benched")
    return 0


async def _standings(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.GetStandings(lp.GetStandingsRequest(latest_only=args.latest),
                                     metadata=md, timeout=args.timeout)
    rows = [lp.standing_to_dict(s) for s in answer.standings]
    return _print_rows(args, "standings", rows, "no bots", standings_table)


def _game_line(g: dict[str, Any]) -> list[str]:
    return [g["game_key"], ", ".join(g["seats"]), "-".join(map(str, g["scores"])),
            g["termination"], g["finished_at"]]


async def _games(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    answer = await stub.ListGames(lp.ListGamesRequest(bot=args.bot, limit=max(0, args.limit)),
                                  metadata=md, timeout=args.timeout)
    games = [lp.game_to_dict(g) for g in answer.games]
    return _print_rows(args, "games", games, "no games", lambda rows: tabulate(
        [_game_line(g) for g in rows], headers=("game", "seats", "scores", "end", "finished")))


def _print_rows(args: argparse.Namespace, key: str, rows: list[dict[str, Any]], empty: str,
                table: Callable[[list[dict[str, Any]]], str]) -> int:
    """One answer's rows: as ``{key: rows}`` JSON with ``--json``, else ``empty`` or the
    ``table`` of them."""
    print(json.dumps({key: rows}) if args.json else table(rows) if rows else empty)
    return 0


def _event_line(event: dict[str, Any]) -> str:
    kind = event["event"]
    if kind == "game_finished":
        return "game finished: " + "  ".join(_game_line(event["game"])[:4])
    if kind == "rating_changed":
        return "rating changed: " + ", ".join(
            f"{r['name']} {elo_text(r)} ({r['games']:g} games)" for r in event["standings"])
    if kind == "bot_connected":
        return f"bot connected: {event['name']}"
    if kind == "bot_benched":
        until = time.strftime("%H:%M:%S", time.localtime(event["until"]))
        return f"bot benched: {event['name']} until {until}: {event['reason']}"
    return f"{kind} event"


async def _watch(stub: Any, args: argparse.Namespace, md: Metadata) -> int:
    async for message in stub.WatchLadder(lp.WatchLadderRequest(), metadata=md):
        event = lp.event_to_dict(message)
        print(json.dumps(event) if args.json else _event_line(event), flush=True)
    return 0


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, Metadata], Coroutine[Any, Any, int]]] = {
    "register": _register, "new-version": _new_version, "rotate": _rotate,
    "retire": _retire, "restore": _restore, "lift": _lift, "standings": _standings,
    "games": _games, "ladder-watch": _watch,
}
