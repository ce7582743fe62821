"""The ``euchre-harness`` command line: one module per command.

Each command module has ``register(sub)``, which adds its sub-parser to ``sub`` and sets
``handler=`` to a function ``(args: argparse.Namespace) -> int`` (the exit status).
:data:`COMMANDS` lists the modules; :func:`main` parses, calls the handler, and turns a
:class:`~harness.errors.HarnessError` or an OSError into one line on stderr (status 2).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from types import ModuleType

from harness.errors import HarnessError

__all__ = ["COMMANDS", "build_parser", "main", "quoting_hint"]

QUOTED_FLAGS = ("--bot", "--set", "--rule")
"""Flags whose value may hold spaces (a bot's command line): a value given unquoted
leaves its other words as unrecognized arguments."""

COMMANDS: dict[str, str] = {
    "run": "run a tournament (default: the sample bots) and print the standings",
    "match": "play games between a few bots and print the results",
    "sprt": "a head-to-head SPRT between two bots",
    "ratings": "recompute the tables from a results store",
    "replay": "show a stored game hand by hand",
    "report": "write report.html and a replay page per game from a results folder",
    "serve": "run a referee for remote bots and operator calls",
    "ladder": "run a standing ladder, or manage its bots",
    "ctl": "operate a running referee or ladder over gRPC: bots, tournaments, ladder "
           "entrants",
    "play": "play a game yourself, in the terminal, with bots",
    "analyze": "value every decision of stored games by search; per-bot mistakes",
}
"""Each command (its module is ``harness.cli.<name>``) and its line in the main help.
A command's module is imported only when it runs (or its help is asked for), so that a
short command such as ``ctl status`` does not load what ``analyze`` needs."""


def command_module(name: str) -> ModuleType:
    """The module of command ``name``."""
    return importlib.import_module(f"harness.cli.{name}")

DESCRIPTION = """\
A referee, tournament runner and rating tool for Euchre bots. Bots are programs in any
language that connect to the referee over gRPC; the referee enforces the rules and the
clock, stores every game, and rates the bots by Elo. Run a command with --help for its
flags."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``only``, that command's in full and the others
    as their help line (enough to parse a command line that names ``only``)."""
    ap = argparse.ArgumentParser(prog="euchre-harness", description=DESCRIPTION)
    ap.add_argument("-v", "--verbose", action="store_true", help="log what the referee does")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, line in COMMANDS.items():
        if only is None or name == only:
            command_module(name).register(sub)
        else:
            sub.add_parser(name, help=line)
    return ap


def _command_word(words: Sequence[str]) -> str | None:
    """The command a command line names (the first word that is not a main option), if
    it is one."""
    for word in words:
        if word.startswith("-"):
            continue
        return word if word in COMMANDS else None
    return None


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
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_word(words))
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
        from harness.cli.common import os_error_line
        print(f"euchre-harness: error: {os_error_line(e)}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("euchre-harness: interrupted", file=sys.stderr)
        code = 130
    return code
