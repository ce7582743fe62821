"""The ``euchre-harness`` command line: one module per command.

Each command module has ``register(sub)``, which adds its sub-parser to ``sub`` and sets
``handler=`` to a function ``(args: argparse.Namespace) -> int`` (the exit status).
:data:`COMMANDS` lists the modules; :func:`main` parses, calls the handler, and turns a
:class:`~harness.errors.HarnessError` or an OSError into one line on stderr (status 2).
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from types import ModuleType

from harness.cli import (
    analyze,
    ctl,
    ladder,
    match,
    play,
    ratings,
    replay,
    report,
    run,
    serve,
    sprt,
)
from harness.cli.common import os_error_line
from harness.errors import HarnessError

__all__ = ["COMMANDS", "build_parser", "main", "quoting_hint"]

QUOTED_FLAGS = ("--bot", "--set", "--rule")
"""Flags whose value may hold spaces (a bot's command line): a value given unquoted
leaves its other words as unrecognized arguments."""

COMMANDS: tuple[ModuleType, ...] = (run, match, sprt, ratings, replay, report, serve, ladder,
                                    ctl, play, analyze)

DESCRIPTION = """\
A referee, tournament runner and rating tool for Euchre bots. Bots are programs in any
language that connect to the referee over gRPC; the referee enforces the rules and the
clock, stores every game, and rates the bots by Elo. Run a command with --help for its
flags."""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="euchre-harness", description=DESCRIPTION)
    ap.add_argument("-v", "--verbose", action="store_true", help="log what the referee does")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return ap


def quoting_hint(words: Sequence[str], extra: Sequence[str]) -> str:
    """When the unrecognized ``extra`` words follow a ``--bot``/``--set``/``--rule``
    value in ``words``, a hint to quote that value whole (else "")."""
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag not in QUOTED_FLAGS:
            continue
        at = i + 1 if eq else i + 2
        if not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
        rest: list[str] = []
        while at < len(words) and len(rest) < len(extra) and words[at] == extra[len(rest)]:
            rest.append(words[at])
            at += 1
        if rest:
            return (f" (a command line with spaces is one argument: quote it, "
                    f"{flag} {shlex.quote(' '.join([value, *rest]))})")
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status (``python -m harness`` exits with it)."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(words)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}{quoting_hint(words, extra)}")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s: %(message)s")
    try:
        code: int = args.handler(args)
    except HarnessError as e:
        print(f"euchre-harness: error: {e}", file=sys.stderr)
        code = 2
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    except OSError as e:  # an output or log folder that cannot be written, ...
        print(f"euchre-harness: error: {os_error_line(e)}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("euchre-harness: interrupted", file=sys.stderr)
        code = 130
    return code
