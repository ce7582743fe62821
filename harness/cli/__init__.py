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

__all__ = ["COMMANDS", "build_parser", "main"]

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


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status (``python -m harness`` exits with it)."""
    args = build_parser().parse_args(argv)
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
