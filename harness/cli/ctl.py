"""``euchre-harness ctl``: a command-line client for a running referee's operator API
(``euchre.v1.OperatorService``), for machines without grpcurl.

    euchre-harness ctl bots              the bot sessions the referee knows
    euchre-harness ctl start CONFIG      start a tournament from a TOML file
    euchre-harness ctl list              every tournament, stored ones included
    euchre-harness ctl status ID         one tournament's progress and standings
    euchre-harness ctl watch ID          follow it live until it ends
    euchre-harness ctl cancel ID         stop it (its finished games stay stored)
    euchre-harness ctl resume ID         continue a cancelled or interrupted one

and, for a running ladder (``euchre-harness ladder``; see :mod:`harness.cli._ctl_ladder`):
``register``, ``new-version``, ``rotate``, ``retire``, ``restore``, ``lift``,
``standings``, ``games`` and ``ladder-watch`` (also ``watch`` with no ID); and, for a
ladder or ``serve``, ``submit`` and ``build-log`` for hosted bots (see
:mod:`harness.cli._ctl_submit`).

The referee's address comes from ``--address`` or ``EUCHRE_REFEREE_ADDRESS`` (default
``127.0.0.1:50051``, where ``serve`` listens), the operator token from
``EUCHRE_OPERATOR_TOKEN`` or ``--operator-token``. The token is sent as gRPC metadata and
never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

from harness.cli import COMMANDS, _ctl_ladder, _ctl_submit
from harness.errors import CtlError
from harness.protocol import ladder as lp
from harness.protocol import operator as op
from harness.protocol.tls import TLS_CA_ENV, ca_file, dial
from harness.results.rating_text import rating_text

ADDRESS_ENV = "EUCHRE_REFEREE_ADDRESS"
TOKEN_ENV = "EUCHRE_OPERATOR_TOKEN"
DEFAULT_ADDRESS = "127.0.0.1:50051"


def register(sub: Any) -> None:
    """Add the ``ctl`` command (``sub`` is the ``add_subparsers`` object of the main
    parser); its handler is :func:`main`."""
    p: argparse.ArgumentParser = sub.add_parser(
        "ctl", help=COMMANDS["ctl"],
        description="A client for a running referee's operator API "
                    "(euchre.v1.OperatorService): bots, tournaments, live standings; and "
                    "for a running ladder's (euchre.v1.LadderService): registrations, "
                    "standings, games, events.",
        epilog=f"The address comes from --address or ${ADDRESS_ENV}, the token from "
               f"${TOKEN_ENV} or --operator-token; the token is never printed.")
    p.add_argument("--address", default=None, metavar="HOST:PORT",
                   help=f"the referee's operator address (default: ${ADDRESS_ENV}, else "
                        f"{DEFAULT_ADDRESS})")
    p.add_argument("--operator-token", default=None, metavar="TOKEN",
                   help=f"the referee's operator token (default: ${TOKEN_ENV}); prefer the "
                        f"variable, as other users can see a flag in the process list")
    p.add_argument("--tls-ca", default=None, metavar="FILE",
                   help=f"dial with TLS, trusting this CA certificate (PEM) (default: "
                        f"${TLS_CA_ENV}; unset or empty: plaintext)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for an answer (default 10; watch waits for ever)")
    p.add_argument("--json", action="store_true",
                   help="print each answer as one line of JSON")
    csub = p.add_subparsers(dest="ctl_command", required=True, metavar="COMMAND",
                            help="what to ask the referee")

    def command(name: str, text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = csub.add_parser(
            name, help=text, description=text[0].upper() + text[1:] + ".")
        parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                            help="print each answer as one line of JSON (also before "
                                 "the command)")
        return parser

    command("bots", "list the bot sessions the referee knows")
    s = command("start", "start a tournament from a TOML configuration")
    s.add_argument("config", metavar="CONFIG",
                   help="the tournament's TOML file (paths in it are resolved on the "
                        "referee's machine: use absolute ones)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a configuration key, e.g. --set games=4 (repeatable)")
    command("list", "every tournament, those stored by earlier runs included")
    for name, text in (("status", "one tournament's progress and standings"),
                       ("resume", "continue a tournament that is not running")):
        command(name, text).add_argument("id", metavar="ID", help="the tournament's id")
    command("watch", "follow a tournament's standings live until it ends; with no ID, a "
                     "ladder's events (as ladder-watch)").add_argument(
        "id", metavar="ID", nargs="?", help="the tournament's id (none: the ladder)")
    c = command("cancel", "stop a tournament; its finished games stay stored")
    c.add_argument("id", metavar="ID", help="the tournament's id")
    c.add_argument("--reason", default="", help="why (shown in its status)")
    _ctl_ladder.add_commands(command)
    _ctl_submit.add_commands(command)
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except CtlError as e:
        print(f"euchre-harness ctl: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _address(args: argparse.Namespace) -> str:
    return str(args.address or os.environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS)


def _metadata(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    token = args.operator_token or os.environ.get(TOKEN_ENV)
    return (("authorization", f"Bearer {token}"),) if token else ()


def _token_source(args: argparse.Namespace) -> str:
    """Where this call's operator token came from ("" when none was sent)."""
    if args.operator_token:
        return "--operator-token"
    return f"${TOKEN_ENV}" if os.environ.get(TOKEN_ENV) else ""


def _explain(error: grpc.aio.AioRpcError, address: str, timeout: float,
             tls: bool, token_source: str = "") -> str:
    code = error.code()
    if code is grpc.StatusCode.PERMISSION_DENIED:
        sent = (f"the operator token of {token_source} is not the referee's" if token_source
                else f"no operator token was sent (set --operator-token or ${TOKEN_ENV})")
        return (f"permission denied by the referee at {address}: {sent}; without a token "
                f"of its own, a referee accepts operator calls from its own machine only")
    if code is grpc.StatusCode.UNAVAILABLE:
        hint = "" if tls else f"; a referee that serves TLS needs --tls-ca or ${TLS_CA_ENV}"
        return (f"cannot reach a referee at {address} (is euchre-harness serve or ladder "
                f"running there? set --address or ${ADDRESS_ENV}{hint})")
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"no answer from the referee at {address} within {timeout:g}s"
    if code is grpc.StatusCode.UNIMPLEMENTED:
        return (f"the server at {address} does not offer this call (ladder commands "
                f"need a running euchre-harness ladder; tournament ones euchre-harness "
                f"serve)")
    detail = (error.details() or "").splitlines()[0] if error.details() else ""
    return f"{code.name.lower()}: {detail or 'no detail'}"


def _on_this_machine(address: str) -> bool:
    """Whether a gRPC target (``HOST:PORT``, ``[V6]:PORT``, ``dns:///HOST:PORT``,
    ``unix:PATH``) names this machine."""
    target = address.split("///", 1)[-1]
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    host = target.rsplit(":", 1)[0].strip("[]") if ":" in target else target
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: not this machine, as far as a client can tell
        return False


async def _run(args: argparse.Namespace) -> int:
    address = _address(args)
    ca = ca_file(args.tls_ca)
    if ca is None and not _on_this_machine(address) and (
            _metadata(args) or getattr(args, "bot_token", None)
            or os.environ.get("EUCHRE_BOT_TOKEN")):
        print(f"note: sending a token to {address} without TLS: anyone on the way can read "
              f"it (give --tls-ca with the referee's certificate)", file=sys.stderr)
    try:
        async with dial(address, ca) as channel:
            ladder = "ladder-watch" if args.ctl_command == "watch" and not args.id \
                else args.ctl_command
            if ladder in _ctl_submit.COMMANDS:  # a ladder's or serve's
                return await _ctl_submit.COMMANDS[ladder](channel, args, _metadata(args))
            if ladder in _LADDER_COMMANDS:
                return await _LADDER_COMMANDS[ladder](
                    lp.LadderServiceStub(channel), args, _metadata(args))
            stub = op.OperatorServiceStub(channel)
            return await _COMMANDS[args.ctl_command](stub, args, _metadata(args))
    except grpc.aio.AioRpcError as e:
        raise CtlError(_explain(e, address, args.timeout, ca is not None,
                                _token_source(args))) from None


_LADDER_COMMANDS = _ctl_ladder.COMMANDS


# ---------------------------------------------------------------------- commands

async def _bots(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    answer = await stub.ListBots(op.ListBotsRequest(), metadata=md, timeout=args.timeout)
    rows = [{"name": b.name, "state": op.bot_state_name(b.state), "session": b.session_id,
             "game": b.game_id, "games": b.games_played, "faults": b.faults, "peer": b.peer}
            for b in answer.bots]
    if args.json:
        print(json.dumps({"bots": rows}))
    elif not rows:
        print("no bots")
    else:
        _table(["name", "state", "session", "game", "games", "faults", "peer"],
               [[str(r[k]) for k in r] for r in rows])
    return 0


async def _start(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    path = Path(args.config)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CtlError(f"cannot read {path}: {e.strerror or e}") from None
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CtlError(f"--set takes KEY=VALUE; got {item!r}")
        overrides[key.strip()] = value.strip()
    answer = await stub.StartTournament(
        op.StartTournamentRequest(config_toml=text, overrides=overrides), metadata=md,
        timeout=args.timeout)
    if args.json:
        print(json.dumps({"tournament_id": answer.tournament_id}))
    else:
        print(f"started {answer.tournament_id}; follow it with: euchre-harness ctl watch "
              f"{answer.tournament_id}")
    return 0


async def _list(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    answer = await stub.ListTournaments(op.ListTournamentsRequest(), metadata=md,
                                        timeout=args.timeout)
    items = [op.progress_to_dict(t) for t in answer.tournaments]
    if args.json:
        print(json.dumps({"tournaments": items}))
    elif not items:
        print("no tournaments")
    else:
        _table(["id", "status", "games", "name"],
               [[t["tournament_id"], t["status"], _games(t), t["name"]] for t in items])
    return 0


async def _status(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    answer = await stub.GetTournament(op.GetTournamentRequest(tournament_id=args.id),
                                      metadata=md, timeout=args.timeout)
    return _show(answer.tournament, args.json, full=True)


async def _watch(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    last: op.TournamentProgress | None = None
    async for update in stub.WatchTournament(
            op.WatchTournamentRequest(tournament_id=args.id), metadata=md):
        if update.tournament != last:
            _show(update.tournament, args.json, full=False)
        last = update.tournament
    if last is None:
        raise CtlError(f"the referee ended the watch of {args.id!r} without an update")
    if not args.json:
        _show(last, False, full=True)
    return 1 if op.status_name(last.status) == "failed" else 0


async def _cancel(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    answer = await stub.CancelTournament(
        op.CancelTournamentRequest(tournament_id=args.id, reason=args.reason), metadata=md,
        timeout=args.timeout)
    status = op.status_name(answer.tournament.status)
    if status != "cancelled" and not args.json:
        print(f"{args.id} was not running (it is {status}): nothing to cancel",
              file=sys.stderr)
    return _show(answer.tournament, args.json, full=False)


async def _resume(stub: Any, args: argparse.Namespace, md: Sequence[tuple[str, str]]) -> int:
    answer = await stub.ResumeTournament(op.ResumeTournamentRequest(tournament_id=args.id),
                                         metadata=md, timeout=args.timeout)
    return _show(answer.tournament, args.json, full=False)


_COMMANDS = {"bots": _bots, "start": _start, "list": _list, "status": _status,
             "watch": _watch, "cancel": _cancel, "resume": _resume}


# ---------------------------------------------------------------------- output

def _games(t: dict[str, Any]) -> str:
    return f"{t['games_done']}/{t['games_total'] or '?'}"


def _show(p: op.TournamentProgress, as_json: bool, *, full: bool) -> int:
    t = op.progress_to_dict(p)
    if as_json:
        print(json.dumps(t), flush=True)
        return 0
    line = f"{t['tournament_id']}: {t['status']}, {_games(t)} games"
    if t["detail"]:
        line += f" ({t['detail']})"
    if not full:
        leaders = ", ".join(f"{r['name']} {_elo(r)}" for r in t["standings"][:4])
        print(line + (f"; {leaders}" if leaders else ""), flush=True)
        return 0
    print(line)
    if t["standings"]:
        _table(["rank", "name", "elo", "+/-", "games", "score"],
               [[str(i), r["name"], _elo(r),
                 "-" if r["sweep"] or _anchor(r) else f"{r['ci95']:.0f}",
                 str(r["games"]), f"{100 * r['score']:.1f}%"]
                for i, r in enumerate(t["standings"], 1)])
    return 0


def _elo(row: dict[str, Any]) -> str:
    """The rating as the reports print it: a bound for a bot that won or lost everything,
    the anchor's fixed rating marked ``(anchor)``."""
    return rating_text(row["elo"], sweep=row.get("sweep"), bound=row.get("bound"),
                       anchor=_anchor(row), games=row.get("games"))


def _anchor(row: dict[str, Any]) -> bool:
    """Whether the row is the tournament's anchor: the one rating fixed exactly, so the
    only one with no interval at all (a fit without an anchor gives every bot one)."""
    return not row.get("sweep") and row["elo"] is not None and row.get("ci95") == 0.0


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
