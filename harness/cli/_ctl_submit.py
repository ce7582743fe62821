"""``euchre-harness ctl submit`` and ``ctl build-log``: upload a hosted bot to a running
ladder (``euchre.v1.LadderService.SubmitBot``) or ``serve``
(``euchre.v1.OperatorService.SubmitHostedBot``) and read its build's log. The ladder's
call is tried first; a server without the ladder service (UNIMPLEMENTED) is a ``serve``.

    euchre-harness ctl submit NAME PATH      PATH: a folder, a .tar.gz (.tgz) or a .zip
    euchre-harness ctl build-log NAME@N

A folder is packed as a .tar.gz (without ``.git`` and ``__pycache__``), symbolic links
kept as links. The bundle goes in chunks with its size and sha256, which the ladder
checks. The caller is the operator (``EUCHRE_OPERATOR_TOKEN``) or the bot itself: its
token in ``EUCHRE_BOT_TOKEN`` (or ``--bot-token``) submits the next version of that bot
only and reads its build logs. ``submit`` prints the new version's token once, on
stdout: the next submission needs it, as the older version's token stops working.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tarfile
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from pathlib import Path
from typing import IO, Any

import grpc

from harness.cli.common import default_owner
from harness.errors import SubmitError
from harness.protocol import ladder as lp
from harness.protocol import operator as op

__all__ = ["BOT_TOKEN_ENV", "CHUNK_BYTES", "COMMANDS", "add_commands", "pack"]

BOT_TOKEN_ENV = "EUCHRE_BOT_TOKEN"
CHUNK_BYTES = 1 << 20
UPLOAD_TIMEOUT_S = 600.0
_SKIPPED = frozenset({".git", "__pycache__"})

Metadata = Sequence[tuple[str, str]]


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """Add ``submit`` and ``build-log``; ``command(name, help)`` makes one sub-parser."""
    s = command("submit", "upload a bot (a folder, .tar.gz or .zip with a bot.toml) to a "
                          "running ladder or serve as its next version, and print that "
                          "version's token (a ladder's) or name (serve's)")
    s.add_argument("name", help="the bot (a new name registers it: operator only)")
    s.add_argument("path", type=Path, help="a folder, a .tar.gz (.tgz) or a .zip")
    s.add_argument("--owner", default=None,
                   help="a new bot's owner (default: your user name)")
    s.add_argument("--description", default="", help="a new bot's description")
    s.add_argument("--concurrency", type=int, default=0,
                   help="a new bot's seats at once (default: the seats of one game)")
    b = command("build-log", "print a hosted bot version's build log")
    b.add_argument("name", help="the version, NAME@N")
    for parser in (s, b):
        parser.add_argument("--bot-token", default=None, metavar="TOKEN",
                            help=f"act as this bot, with its token (default: "
                                 f"${BOT_TOKEN_ENV}; else the operator token); prefer the "
                                 f"variable, as other users can see a flag")


def _format_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    return "zip" if name.endswith(".zip") else None


def pack(folder: Path, out: IO[bytes]) -> None:
    """Write ``folder``'s contents (not the folder itself) to ``out`` as a .tar.gz."""
    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if _SKIPPED & set(parts):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    # gzip's own default level (as ``tar czf``): half the time of tarfile's level 9, for
    # a bundle about 1% larger.
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=6) as tar:
        for entry in sorted(folder.iterdir()):
            tar.add(entry, arcname=entry.name, filter=keep)


def _bundle(path: Path, spool: IO[bytes]) -> tuple[str, IO[bytes]]:
    """The bundle's format and a file of its bytes (``spool`` for a packed folder)."""
    if path.is_dir():
        if not (path / "bot.toml").is_file():
            raise SubmitError(f"{path} has no bot.toml (it says how to run the bot)")
        pack(path, spool)
        spool.seek(0)
        return "tar.gz", spool
    fmt = _format_of(path)
    if fmt is None:
        raise SubmitError(f"{path}: give a folder, a .tar.gz (.tgz) or a .zip")
    try:
        return fmt, path.open("rb")
    except OSError as e:
        raise SubmitError(f"cannot read {path}: {e.strerror or e}") from None


def _metadata(args: argparse.Namespace, operator: Metadata) -> Metadata:
    token = args.bot_token or os.environ.get(BOT_TOKEN_ENV)
    return (("authorization", f"Bearer {token}"),) if token else operator


def _unimplemented(error: grpc.aio.AioRpcError) -> bool:
    return error.code() is grpc.StatusCode.UNIMPLEMENTED


_CUT = frozenset({grpc.StatusCode.INTERNAL, grpc.StatusCode.CANCELLED})
"""How an upload ends when the referee answered while its chunks were still being sent."""


async def _hear_refusal(call: Any, header: Any, metadata: Metadata) -> None:
    """The referee refuses an upload at its header (over its cap, another bot's token)
    at once, while the chunks may still be on their way; the cut stream can then hide
    its answer behind an INTERNAL or CANCELLED status. Send the header alone to hear
    that answer, and raise it (UNIMPLEMENTED too: a referee without the ladder's
    service, which the caller then asks through the operator's); return if the header
    is not what was refused (the referee then says only that no bytes followed it)."""

    async def alone() -> AsyncIterator[Any]:
        yield header

    try:
        await call(alone(), metadata=metadata, timeout=UPLOAD_TIMEOUT_S)
    except grpc.aio.AioRpcError as verdict:
        if verdict.code() not in _CUT and \
                "ended after 0 bytes" not in (verdict.details() or ""):
            raise verdict from None


async def _submit(channel: grpc.aio.Channel, args: argparse.Namespace, md: Metadata) -> int:
    with tempfile.TemporaryFile() as spool:
        fmt, source = _bundle(args.path, spool)
        with source:
            digest = hashlib.sha256()
            while chunk := source.read(CHUNK_BYTES):
                digest.update(chunk)
            size = source.tell()
            header = lp.SubmitHeader(
                name=args.name, format=lp.BUNDLE_FORMATS[fmt], size=size,
                sha256=digest.hexdigest(), owner=args.owner or default_owner(),
                description=args.description, concurrency=max(0, args.concurrency))

            async def parts(message: Any) -> AsyncIterator[Any]:
                yield message(header=header)
                source.seek(0)
                while chunk := source.read(CHUNK_BYTES):
                    yield message(chunk=chunk)

            timeout = max(args.timeout, UPLOAD_TIMEOUT_S)
            metadata = _metadata(args, md)

            async def upload(call: Any, message: Any) -> Any:
                try:
                    return await call(parts(message), metadata=metadata, timeout=timeout)
                except grpc.aio.AioRpcError as e:
                    if e.code() not in _CUT:
                        raise
                    await _hear_refusal(call, message(header=header), metadata)
                    raise

            try:
                answer = await upload(lp.LadderServiceStub(channel).SubmitBot,
                                      lp.SubmitBotRequest)
                name, state, token = answer.bot.name, answer.bot.build_state, answer.token
                sha256 = answer.sha256
            except grpc.aio.AioRpcError as e:
                if not _unimplemented(e):
                    raise
                hosted = await upload(op.OperatorServiceStub(channel).SubmitHostedBot,
                                      op.SubmitHostedBotRequest)
                name, state, token = hosted.name, hosted.build_state, ""
                sha256 = hosted.sha256
    if args.json:
        print(json.dumps({"name": name, "token": token, "sha256": sha256,
                          "build_state": state}))
    elif token:
        print(f"{name}: {token}")
        print(f"submitted {name} ({size} bytes, sha256 {sha256}): "
              f"{state}; keep its token: it is shown only once", file=sys.stderr)
    else:
        print(name)
        print(f"submitted {name} ({size} bytes, sha256 {sha256}): {state}; name it "
              f"in a tournament's [[bot]] as hosted = \"{name}\"", file=sys.stderr)
    return 0


async def _build_log(channel: grpc.aio.Channel, args: argparse.Namespace,
                     md: Metadata) -> int:
    metadata = _metadata(args, md)
    answer: lp.GetBuildLogResponse | op.GetHostedBuildLogResponse
    try:
        answer = await lp.LadderServiceStub(channel).GetBuildLog(
            lp.GetBuildLogRequest(name=args.name), metadata=metadata, timeout=args.timeout)
    except grpc.aio.AioRpcError as e:
        if not _unimplemented(e):
            raise
        answer = await op.OperatorServiceStub(channel).GetHostedBuildLog(
            op.GetHostedBuildLogRequest(name=args.name), metadata=metadata,
            timeout=args.timeout)
    if args.json:
        print(json.dumps({"name": args.name, "build_state": answer.build_state,
                          "detail": answer.detail, "log": answer.log}))
        return 0
    sys.stdout.write(answer.log)
    detail = f": {answer.detail}" if answer.detail else ""
    print(f"{args.name}: {answer.build_state}{detail}", file=sys.stderr)
    return 0


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, Metadata], Coroutine[Any, Any, int]]] = {
    "submit": _submit, "build-log": _build_log,
}
