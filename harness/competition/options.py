"""Every key of a tournament's or a ladder's file, once: its type, default, help text and
checks (the configuration schema the tournament and the ladder share).

The TOML loader (:mod:`harness.tournament.config`), ``--set KEY=VALUE``, the command-line
flags of ``run`` and ``sprt``, :meth:`TournamentConfig.to_dict` and the key table in the
README are all read from :data:`OPTIONS` (and :data:`BOT_OPTIONS` for a ``[[bot]]``).
The ``[rules]`` keys belong to :class:`~harness.rules.config.RulesConfig`, which checks
them itself; only their value types are derived here, for ``--set`` and ``--rule``.

Values given as text (``--set``, a flag, ``--rule``) are read as TOML first
(``games=10``, ``rules.form='"two-handed"'``, ``gauntlet.candidates='["a", "b"]'``) and,
when that does not give a value of the key's type, as plain text: ``rules.form=cutthroat``,
``duplicate=no``, ``gauntlet.candidates=a,b``, ``anchor=`` (empty: none).
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.competition.policies import RETRY_SECONDS, Policy, QuarantinePolicy
from harness.competition.seatings import PARTNERSHIPS
from harness.errors import ConfigError, UnknownKeysError
from harness.hosting.files import DEFAULT_DISK_RESERVE, DEFAULT_MAX_BYTES
from harness.referee.botlog import DEFAULT_LOG_LIMIT
from harness.referee.outcome import CLOCKS, FaultPolicy, TimeControl
from harness.results.sprt import Sprt
from harness.rules.config import RulesConfig
from harness.sandbox.box import BoxLimits

__all__ = [
    "BOT_OPTIONS",
    "BOX_FIELDS",
    "FORMATS",
    "OPTIONS",
    "RULE_KINDS",
    "Option",
    "default",
    "default_bot",
    "option",
    "options_table",
    "parse_text",
    "read_value",
]

FORMATS = ("round-robin", "gauntlet", "sprt")
_FIXED = ("round-robin", "gauntlet")  # the formats with a fixed schedule


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The default of a key that must be given."""


@dataclasses.dataclass(frozen=True)
class Option:
    """One key. ``kind`` is its value type in the file: ``str``, ``int``, ``float``,
    ``bool``, ``strings`` (an array of strings), ``name`` (a string, or none), ``command``
    (a string split like a shell would, or an array of strings), ``table`` (strings to
    strings), ``tc`` (a string or a number) or ``section`` (a table checked elsewhere)."""

    key: str
    kind: str
    help: str
    default: Any = None  # the value when the key is absent; REQUIRED if it must be given
    shown_default: str | None = None  # the default as the docs say it, if not the value
    required: str = ""  # the error when a REQUIRED key is missing
    minimum: float | None = None  # int, float: the smallest value; strings: the fewest entries
    above: float | None = None  # int, float: what the value must be greater than
    choices: tuple[str, ...] = ()
    convert: Callable[[Any], Any] | None = None  # to the configuration's value type
    factory: Callable[[], Any] | None = None  # computes the default (defaults to `default`)
    stored: tuple[str, ...] = ()  # the formats whose to_dict() keeps the key
    stored_as: str = ""  # its key in to_dict() ("" = the same key)
    flag_in: tuple[str, ...] = ()  # the commands with a --flag for it

    @property
    def flag(self) -> str:
        """``--max-pairs`` for ``sprt.max_pairs``."""
        return "--" + self.leaf.replace("_", "-")

    @property
    def leaf(self) -> str:
        return self.key.rpartition(".")[2]

    def default_value(self) -> Any:
        return self.factory() if self.factory is not None else self.default

    def docs_default(self) -> str:
        if self.shown_default is not None:
            return self.shown_default
        if self.default is REQUIRED:
            return "required"
        if self.default is None:
            return "none"
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        if isinstance(self.default, str):
            return f'"{self.default}"'
        return str(self.default)


def _format(value: str) -> str:
    return value.strip().lower().replace("_", "-")


def _folder(value: str) -> Path:
    return Path(value).expanduser()


def _field_default(cls: Any, field: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == field)


def _sprt_default(field: str) -> Any:
    return _field_default(Sprt, field)


def _ladder_default(key: str) -> Any:
    """The default of ``[ladder]`` key ``key``: the field of that name of the matchmaker's
    policy or the quarantine's (:mod:`harness.competition.policies`)."""
    policy = Policy if key in {f.name for f in dataclasses.fields(Policy)} else QuarantinePolicy
    return _field_default(policy, key)


OPTIONS: tuple[Option, ...] = (
    Option("name", "str", "shown in reports", REQUIRED,
           required="the tournament needs a name", stored=FORMATS),
    Option("id", "str", "the tournament's key in the results store", "",
           shown_default="slug of name", stored=FORMATS, flag_in=("run", "sprt")),
    Option("output", "str", "results folder, relative to the current directory",
           Path("results"), shown_default='"results"', convert=_folder,
           flag_in=("run", "sprt")),
    Option("seed", "int", "derives every deal; the same seed gives the same deals (with "
           "remote bots, choose one and keep it private: the default is public); every "
           "pairing plays round k's deals, but with remote, boxed or hosted bots each "
           "pairing gets its own", 1,
           stored=FORMATS, flag_in=("run", "sprt")),
    Option("concurrency", "int", "games played at once (not on a cluster: there each worker "
                                "plays as many as it has threads)", minimum=1,
           factory=lambda: os.cpu_count() or 1, shown_default="number of CPU cores",
           flag_in=("run", "sprt")),
    Option("format", "str", "round-robin, gauntlet (see [gauntlet]) or sprt (see [sprt])",
           "round-robin", choices=FORMATS, convert=_format, stored=FORMATS),
    Option("games", "int", "deal sets per pairing; with duplicate each is played on every "
                           "table", 4, minimum=1, stored=_FIXED, flag_in=("run", "sprt")),
    Option("duplicate", "bool", "play every deal set again with the seats rotated", True,
           stored=FORMATS),
    Option("partnerships", "str", "four-handed: same (a bot partners itself) or mixed",
           "same", choices=PARTNERSHIPS, stored=_FIXED),
    Option("tc", "tc", "seconds per decision + a bank of seconds for the whole game",
           TimeControl(), shown_default=f'"{TimeControl()}"', convert=TimeControl.parse,
           stored=FORMATS, flag_in=("run", "sprt")),
    Option("clock", "str", "what a decision is charged: wall (the time from request to "
           "reply) or cpu (the CPU time of the bot's box; every bot needs sandbox = true)",
           "wall", choices=CLOCKS),
    Option("fault_policy", "str", "forfeit (the first fault loses) or strikes / strikes:N",
           FaultPolicy(), shown_default=f'"{FaultPolicy()}"', convert=FaultPolicy.parse,
           stored=FORMATS),
    Option("anchor", "name", "fix this bot's rating in the reports (none: mean 0)"),
    Option("anchor_rating", "float", "the anchor's rating", 0.0),
    Option("max_startup_failures", "int", "stop the run when one bot fails to start this many "
           "times in a row (0: never stop)", 3, minimum=0),
    Option("cluster.scheduler", "str", "play the games on the workers of this Dask scheduler "
           "(tcp://HOST:8786; see docs/cluster.md)", None, shown_default="none",
           flag_in=("run", "sprt", "ladder")),
    Option("cluster.workers", "int", "play the games on a Dask cluster of this many worker "
           "processes started on this machine (0: no cluster)", 0, minimum=0,
           flag_in=("run", "sprt", "ladder")),
    Option("ladder.provisional_sets", "int", "ladder: a bot is provisional, and served "
           "first, for this many deal sets", _ladder_default("provisional_sets"), minimum=0),
    Option("ladder.closeness_elo", "float", "ladder: the rating gap that costs as much as "
           "one repeat of a pairing", _ladder_default("closeness_elo"), above=0),
    Option("ladder.repeat_weight", "float", "ladder: the cost of playing a pairing more "
           "than its share", _ladder_default("repeat_weight"), minimum=0),
    Option("ladder.repeat_cap", "float", "ladder: a pairing played more than this many "
           "times its share (+1) is not chosen while others are available",
           _ladder_default("repeat_cap"), above=0),
    Option("ladder.bench_faults", "int", "ladder: this many faulted games among a bot's "
           "last bench_window games bench it", _ladder_default("bench_faults"), minimum=1),
    Option("ladder.bench_window", "int", "ladder: the recent games counted for a bench",
           _ladder_default("bench_window"), minimum=1),
    Option("ladder.bench_seconds", "float", "ladder: how long a first bench lasts, in "
           "seconds", _ladder_default("bench_seconds"), above=0),
    Option("ladder.bench_growth", "float", "ladder: each further bench lasts this many "
           "times the one before", _ladder_default("bench_growth"), minimum=1),
    Option("ladder.bench_max_seconds", "float", "ladder: the longest bench, in seconds",
           _ladder_default("bench_max_seconds")),
    Option("ladder.cluster_retry_seconds", "float", "ladder: how often a ladder that lost "
           "its Dask scheduler tries it again (in between, its referee plays every set)",
           RETRY_SECONDS, above=0),
    Option("ladder.house_vs_house", "bool", "ladder: house bots also play sets of their "
           "own (false: every set seats a registered or hosted bot, and a ladder that "
           "none has dialed into is idle)", True),
    Option("ladder.upload_max_mib", "int", "ladder: the largest bundle a hosted bot may be "
           "submitted as (ctl submit), in MiB", DEFAULT_MAX_BYTES >> 20, minimum=1),
    Option("ladder.upload_reserve_mib", "int", "ladder: the free disk, in MiB, a submission "
           "must leave beside its bundle and the most it may unpack to (else it is refused)",
           DEFAULT_DISK_RESERVE >> 20, minimum=0),
    Option("ladder.submissions_per_day", "int", "ladder: how many versions of a bot may be "
           "registered in any 24 hours before its own token's submissions are refused (the "
           "operator's never are)", 10, minimum=1),
    Option("ladder.build_seconds", "float", "ladder: a hosted bot's build is stopped, and "
           "fails, after this many seconds", 600.0, above=0),
    Option("rules", "section", "the rules (see Rules options)", RulesConfig(),
           shown_default="four-handed defaults", stored=FORMATS),
    Option("bot", "section", "the bots, one [[bot]] table each (keys: bot.*)", REQUIRED,
           shown_default="required", stored=FORMATS, stored_as="bots"),
    Option("gauntlet.candidates", "strings", "gauntlet: each candidate plays the other bots",
           (), shown_default="none", stored=("gauntlet",), stored_as="candidates"),
    Option("sprt.candidate", "str", "sprt: the bot under test", REQUIRED,
           required="required in the [sprt] table", stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.baseline", "str", "sprt: the bot it is measured against", REQUIRED,
           required="required in the [sprt] table", stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.elo0", "float", "sprt: H0, the candidate is this many Elo stronger", 0.0,
           stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.elo1", "float", "sprt: H1, the candidate is this many Elo stronger", 10.0,
           stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.alpha", "float", "sprt: false positive rate", _sprt_default("alpha"),
           stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.beta", "float", "sprt: false negative rate", _sprt_default("beta"),
           stored=("sprt",), flag_in=("sprt",)),
    Option("sprt.max_pairs", "int", "sprt: stop undecided after this many duplicate pairs",
           2000, minimum=1, stored=("sprt",), flag_in=("sprt",)),
)

BOT_OPTIONS: tuple[Option, ...] = (
    Option("name", "str", "the bot's name in results", REQUIRED,
           required="every bot needs a name"),
    Option("command", "command", "a local bot: its command line (a string or an array)"),
    Option("tokens", "strings", "a remote bot: one token per seat instance", (),
           minimum=1, shown_default="none"),
    Option("hosted", "str", "a bot submitted to the running serve (ctl submit), as its "
           "version NAME@N: it plays in a box with the box_* limits (serve only)",
           shown_default="none"),
    Option("cwd", "str", "working directory, relative to the file's folder",
           shown_default="the current directory"),
    Option("env", "table", "extra environment variables", shown_default="none"),
    Option("cpu_seconds", "int", "CPU-time limit per process", minimum=1),
    Option("memory_mb", "int", "address-space limit per process", minimum=1),
    Option("log_limit", "int", "bytes of output kept in each of its log files (the start "
           "and the end; the middle is cut)", DEFAULT_LOG_LIMIT, minimum=4096),
    Option("sandbox", "bool", "run each process in a box (see docs/hosting.md): it sees "
           "only its cwd (read-only), the system and its own /tmp, has no network, and has "
           "the box_* limits", False),
    Option("box_memory_mib", "int", "sandbox: memory limit of each box, in MiB",
           _field_default(BoxLimits, "memory_mib"), minimum=16),
    Option("box_pids", "int", "sandbox: process (and thread) limit of each box",
           _field_default(BoxLimits, "pids"), minimum=4),
    Option("box_cpus", "float", "sandbox: CPU quota of each box, in cores",
           _field_default(BoxLimits, "cpus")),
    Option("box_cpuset", "ints", "sandbox: pin each box to these CPUs (none: any)",
           shown_default="none"),
    Option("box_tmp_mib", "int", "sandbox: size of each box's private /tmp, in MiB",
           _field_default(BoxLimits, "tmp_mib"), minimum=1),
)

BOX_FIELDS: Mapping[str, str] = {o.key: o.key.removeprefix("box_") for o in BOT_OPTIONS
                                 if o.key.startswith("box_")}
"""Each ``box_*`` key of a bot and the :class:`~harness.sandbox.box.BoxLimits` field it
sets (the same keys wherever a bot's box is configured)."""

_BY_KEY = {o.key: o for o in OPTIONS}


def _rule_kinds() -> dict[str, str]:
    kinds: dict[str, str] = {}
    for name, hint in typing.get_type_hints(RulesConfig).items():
        args = set(typing.get_args(hint)) or {hint}
        kinds[name] = "bool" if bool in args else "int" if int in args else "str"
    return kinds


RULE_KINDS: Mapping[str, str] = _rule_kinds()
"""The value type of each ``[rules]`` key, from :class:`RulesConfig`."""


def option(key: str) -> Option:
    return _BY_KEY[key]


def default_bot(key: str) -> Any:
    """The default value of the ``[[bot]]`` key ``key``."""
    return next(o for o in BOT_OPTIONS if o.key == key).default_value()


def default(key: str) -> Any:
    """The default value of ``key`` (every default is written once, in OPTIONS)."""
    return _BY_KEY[key].default_value()


# --------------------------------------------------------------------------- values


def type_name(value: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _want_str(value: object, key: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, f"must be a string; got {type_name(value)} ({value!r})")
    if not empty and not value.strip():
        raise ConfigError(key, "must not be empty")
    return value


def _want_strings(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(key, f"must be an array of strings; got {type_name(value)} "
                               f"({value!r})")
    return tuple(_want_str(v, f"{key}[{i}]") for i, v in enumerate(value))


def want_table(value: object, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"must be a table; got {type_name(value)} ({value!r})")
    return value


def _check_kind(kind: str, value: object, key: str) -> Any:
    if kind in ("str", "name"):
        return _want_str(value, key)
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(key, f"must be an integer; got {type_name(value)} ({value!r})")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(key, f"must be a number; got {type_name(value)} ({value!r})")
        if not math.isfinite(value):
            raise ConfigError(key, f"must be finite; got {value!r}")
        return float(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(key, f"must be true or false; got {type_name(value)} "
                                   f"({value!r})")
        return value
    if kind == "strings":
        return _want_strings(value, key)
    if kind == "ints":
        if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
            raise ConfigError(key, f"must be an array of CPU numbers; got {value!r}")
        return tuple(value)
    if kind == "command":
        if isinstance(value, list):
            return list(_want_strings(value, key))
        return _want_str(value, key, empty=True)
    if kind == "table":
        return {k: _want_str(v, f"{key}.{k}", empty=True)
                for k, v in want_table(value, key).items()}
    if kind == "tc":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ConfigError(key, f"must be a string like \"1.0+10\"; got "
                                   f"{type_name(value)} ({value!r})")
        return value
    return value  # "section": checked by its own reader


def read_value(opt: Option, value: object, path: str | None = None) -> Any:
    """A value from a TOML file checked against ``opt`` and converted to the
    configuration's type. Errors name ``path`` (default: the option's key)."""
    key = path or opt.key
    checked: Any = _check_kind(opt.kind, value, key)
    if opt.minimum is not None and opt.kind == "strings" and len(checked) < opt.minimum:
        raise ConfigError(key, f"needs at least one entry; got {list(checked)!r}")
    if opt.kind in ("int", "float"):
        if opt.minimum is not None and checked < opt.minimum:
            raise ConfigError(key, f"must be at least {opt.minimum:g}; got {checked}")
        if opt.above is not None and not checked > opt.above:
            raise ConfigError(key, f"must be > {opt.above:g}; got {checked}")
    if opt.convert is not None:
        try:
            checked = opt.convert(checked)
        except ConfigError as e:
            raise ConfigError(key, e.message) from None
    if opt.choices and checked not in opt.choices:
        raise ConfigError(key, f"must be one of {', '.join(opt.choices)}; got {checked!r}")
    return checked


def _kind_of(key: str) -> str:
    if key in _BY_KEY and _BY_KEY[key].kind != "section":
        return _BY_KEY[key].kind
    head, _, rule = key.partition(".")
    if head == "rules" and rule in RULE_KINDS:
        return RULE_KINDS[rule]
    if key == "bot" or key.startswith(("bot.", "bot[")):
        raise ConfigError(key, "bots cannot be overridden; edit the configuration file")
    if head == "rules":
        raise UnknownKeysError([("rules.", rule, list(RULE_KINDS))])
    section = [o.leaf for o in OPTIONS if o.key.startswith(head + ".")] if rule else []
    if section:
        raise UnknownKeysError([(head + ".", rule, section)])
    settable = [o.key for o in OPTIONS if o.kind != "section"]
    raise UnknownKeysError([("", key, settable)])


def _toml_value(text: str) -> object:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return None


def _fits(kind: str, value: object) -> bool:
    if kind in ("str", "name"):
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "strings":
        return isinstance(value, list)
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)  # tc


_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def parse_text(key: str, text: str) -> Any:
    """The value of ``KEY=TEXT`` (``--set``, a flag, ``--rule``) as it would be written in
    the file; ``None`` for an empty ``name`` (none). Raises ConfigError naming the key."""
    kind = _kind_of(key)
    value = text.strip()
    parsed = _toml_value(value)
    if parsed is not None and _fits(kind, parsed):
        return parsed
    if kind == "int":
        try:
            return int(value)
        except ValueError:
            raise ConfigError(key, f"must be an integer; got {text!r}") from None
    if kind == "float":
        try:
            return float(value)
        except ValueError:
            raise ConfigError(key, f"must be a number; got {text!r}") from None
    if kind == "bool":
        if value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        raise ConfigError(key, f"must be true or false; got {text!r}")
    if kind == "strings":
        return [v.strip() for v in value.split(",") if v.strip()]
    if kind == "name" and value.lower() in ("", "none"):
        return None
    return value


def check_keys(table: Mapping[str, Any], allowed: Sequence[str], prefix: str) -> None:
    """Raise UnknownKeysError naming every key of ``table`` not in ``allowed``."""
    unknown = [(prefix, str(key), allowed) for key in table if key not in allowed]
    if unknown:
        raise UnknownKeysError(unknown)


# --------------------------------------------------------------------------- docs


def options_table() -> str:
    """The Markdown table of every key, as the README shows it."""
    lines = ["| key | type | default | flag | what |", "|---|---|---|---|---|"]
    rows = [(o.key, o) for o in OPTIONS if o.kind != "section"]
    rows += [(f"bot.{o.key}", o) for o in BOT_OPTIONS]
    for key, opt in rows:
        flag = f"`{opt.flag}` ({', '.join(opt.flag_in)})" if opt.flag_in else ""
        lines.append(f"| `{key}` | {_KIND_DOCS[opt.kind]} | {opt.docs_default()} | {flag} | "
                     f"{opt.help} |")
    return "\n".join(lines)


_KIND_DOCS = {"str": "string", "name": "bot name", "int": "integer", "float": "number",
              "bool": "boolean", "strings": "array of strings", "tc": "string",
              "ints": "array of integers",
              "command": "string or array", "table": "table"}
