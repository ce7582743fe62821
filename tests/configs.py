"""Tournament and ladder configurations for tests, from one builder.

``toml_config`` writes the TOML text of a tournament (or a ladder: the same schema) from
values; ``bot`` describes one ``[[bot]]`` table, ``remote`` one of a remote bot. A
command is a string in the file's own form (``{python}`` for this Python), or a
:class:`Raw` piece of TOML (an array, say).
``extra`` is TOML text added after the top-level keys, for the few tests that need a key
or a section no other test uses."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HEURISTIC", "HOUSE_PACE_MS", "PACED_HOUSE", "RANDOM", "RANDOM_AND_HEURISTIC", "Bot",
           "Raw", "Value", "bot", "paced", "paced_house", "remote", "toml_config"]

RANDOM = "{python} -m sample_bots.random_bot"
HEURISTIC = "{python} -m sample_bots.heuristic_bot"


@dataclass(frozen=True)
class Raw:
    """TOML text written as it is (an array or an inline table)."""

    text: str


Value = str | int | float | bool | Path | Raw


def _value(value: Value) -> str:
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # a TOML basic string


@dataclass(frozen=True)
class Bot:
    name: str
    command: str | Raw | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    extra: str = ""  # more keys of this [[bot]] table, as TOML text

    def toml(self) -> str:
        lines = ["[[bot]]", f"name = {_value(self.name)}"]
        if self.command is not None:
            lines.append(f"command = {_value(self.command)}")
        if self.env:
            pairs = ", ".join(f"{k} = {_value(v)}" for k, v in self.env.items())
            lines.append(f"env = {{ {pairs} }}")
        if self.extra:
            lines.append(self.extra.strip("\n"))
        return "\n".join(lines)


def bot(name: str, command: str | Raw | None = None, *, seed: int | None = None,
        extra: str = "") -> Bot:
    """A [[bot]]; without a command, the sample bot of that name (``random`` runs
    ``sample_bots.random_bot``); ``seed`` sets its EUCHRE_BOT_SEED."""
    if command is None:
        command = f"{{python}} -m sample_bots.{name}_bot"
    env = {} if seed is None else {"EUCHRE_BOT_SEED": str(seed)}
    return Bot(name, command, env, extra)


def remote(name: str, *tokens: str) -> Bot:
    """A remote [[bot]]: no command, the seats' ``tokens``."""
    return Bot(name, extra=f"tokens = {json.dumps(list(tokens))}")


RANDOM_AND_HEURISTIC = (bot("random"), bot("heuristic"))

SLEEPY_BOT = Path(__file__).resolve().parent.parent / "bench" / "sleepy_bot.py"
HOUSE_PACE_MS = 10


def paced(name: str, ms: int = HOUSE_PACE_MS, *, kind: str | None = None) -> Bot:
    """The sample bot ``kind`` (random or heuristic; by default ``name``) named ``name``,
    sleeping ``ms`` milliseconds before each decision (bench/sleepy_bot.py): house bots
    for a test whose ladder runs long while the test waits for something else than games
    (a build, an upload, a restart). House bots play each other for as long as the ladder
    runs; at full speed they would take a core all that time. (A test that waits for
    games gains nothing: each game costs as much.)"""
    return Bot(name, f"{{python}} {SLEEPY_BOT} {kind or name}", {"SLEEPY_BOT_MS": str(ms)})


def paced_house(ms: int = HOUSE_PACE_MS) -> tuple[Bot, Bot]:
    """The random and heuristic sample bots, each sleeping ``ms`` before each decision."""
    return paced("random", ms), paced("heuristic", ms)


PACED_HOUSE = paced_house()


def toml_config(name: str, *, bots: Sequence[Bot] = RANDOM_AND_HEURISTIC,
                rules: Mapping[str, Value] | None = None, extra: str = "",
                **top: Value | None) -> str:
    """The TOML text: ``name`` and the ``top`` keys (None: left out), ``extra``, the
    ``[rules]`` table, then each bot."""
    lines = [f"name = {_value(name)}"]
    lines += [f"{key} = {_value(value)}" for key, value in top.items() if value is not None]
    if extra:
        lines.append(extra.strip("\n"))
    if rules:
        lines.append("[rules]")
        lines += [f"{key} = {_value(value)}" for key, value in rules.items()]
    lines += [b.toml() for b in bots]
    return "\n".join(lines) + "\n"
