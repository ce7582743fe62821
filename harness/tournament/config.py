"""The tournament configuration: a TOML file, command-line overrides, and the built-in
sample-bots tournament.

Layout (``examples/tournament.toml`` shows every key)::

    name = "my-tournament"        # id defaults to its slug ("my-tournament")
    id = "my-tournament"          # the tournament's key in the results store
    output = "results"            # results folder, relative to the current directory
    seed = 1                      # derives every deal seed
    concurrency = 4               # games at once (default: number of cores)
    format = "round-robin"        # or "gauntlet" or "sprt"
    games = 4                     # deal sets per pairing (round-robin and gauntlet)
    duplicate = true              # replay every deal set with the seats rotated
    partnerships = "same"         # four-handed: "same" (a bot partners itself) or "mixed"
    tc = "1.0+10"                 # seconds per decision + bank per game
    fault_policy = "forfeit"      # or "strikes" / "strikes:N"
    anchor = "random"             # fix this bot's rating in reports (optional)
    anchor_rating = 0.0

    [rules]                       # every option of harness.rules.config.RulesConfig
    form = "four-handed"
    deck = 24                     # or "24"

    [[bot]]
    name = "random"
    command = "{python} -m sample_bots.random_bot"   # a string (shell-split) or a list
    cwd = "bots"                  # optional; relative to the config file's folder
    env = { SEED = "1" }          # optional
    cpu_seconds = 600             # optional limits
    memory_mb = 1024

    [[bot]]
    name = "remote-bot"
    tokens = ["t1", "t2"]         # a remote bot: one token per seat instance

    [gauntlet]
    candidates = ["random"]       # each candidate plays the other bots (the field)

    [sprt]
    candidate = "heuristic"
    baseline = "random"
    elo0 = 0.0
    elo1 = 10.0
    alpha = 0.05
    beta = 0.05
    max_pairs = 2000

``{python}`` in a command expands to :data:`sys.executable`. Overrides are dotted keys
with string values (``games=10``, ``rules.form=cutthroat``, ``sprt.elo1=20``,
``gauntlet.candidates=a,b``, ``anchor=`` for none), parsed to the key's type. Every
error is a :class:`~harness.errors.ConfigError` whose ``option`` is the key path, such as
``bot[1].comand`` (bots are counted from 0) or ``rules.target``; a file that is not valid
TOML is named by its path, with the line and column in the message.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.referee.outcome import FaultPolicy, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.rules.config import Form, RulesConfig
from harness.sprt import Sprt
from harness.tournament.schedule import (
    PARTNERSHIPS,
    Gauntlet,
    RoundRobin,
    SprtMatch,
    TournamentFormat,
)

__all__ = [
    "DEFAULT_SAMPLE_GAMES",
    "FORMATS",
    "SCHEDULE_VERSION",
    "BotEntry",
    "SprtSettings",
    "TournamentConfig",
    "default_config",
    "load_config",
    "slug",
]

FORMATS = ("round-robin", "gauntlet", "sprt")

SCHEDULE_VERSION = 1
"""Part of :meth:`TournamentConfig.to_dict`: bump it when the schedule of an unchanged
configuration changes, so that resuming an old tournament is refused."""

DEFAULT_SAMPLE_GAMES = 100
"""Deal sets in the built-in sample-bots tournament (two games each with duplicate)."""

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def slug(text: str) -> str:
    """Lower-case letters and digits joined by single dashes (``"tournament"`` if empty)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tournament"


def _default_concurrency() -> int:
    return os.cpu_count() or 1


@dataclasses.dataclass(frozen=True)
class BotEntry:
    """One ``[[bot]]``: a local bot (``command``) or a remote one (``tokens``)."""

    name: str
    command: tuple[str, ...] | None = None
    tokens: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    cpu_seconds: int | None = None
    memory_mb: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() \
                or self.name != self.name.strip() or not self.name.isprintable():
            raise ConfigError("name", f"a bot name is a non-empty printable string without "
                                      f"surrounding spaces; got {self.name!r}")
        if self.command is not None and not self.command:
            raise ConfigError("command", f"{self.name}: the command line is empty")
        if (self.command is None) == (not self.tokens):
            raise ConfigError("command", f"{self.name}: give either command (a local bot) "
                                         f"or tokens (a remote bot)")

    @property
    def remote(self) -> bool:
        return self.command is None

    def entrant(self) -> Entrant:
        """The pool entrant: a local bot's command with its limits, or remote tokens."""
        if self.command is None:
            return Entrant(self.name, None, self.tokens)
        return Entrant(self.name, BotCommand(self.command, cwd=self.cwd, env=dict(self.env),
                                             cpu_seconds=self.cpu_seconds,
                                             memory_mb=self.memory_mb))


@dataclasses.dataclass(frozen=True)
class SprtSettings:
    """The ``[sprt]`` table: H0 Elo = ``elo0`` against H1 Elo = ``elo1``."""

    candidate: str
    baseline: str
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int = 2000

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TournamentConfig:
    """A validated tournament. Construct it with :func:`load_config` or
    :func:`default_config`; direct construction runs the same cross-checks."""

    name: str
    bots: tuple[BotEntry, ...]
    id: str = ""  # "" = slug(name)
    output: Path = Path("results")
    seed: int = 1
    concurrency: int = dataclasses.field(default_factory=_default_concurrency)
    format: str = "round-robin"
    games: int = 4
    duplicate: bool = True
    partnerships: str = "same"
    rules: RulesConfig = dataclasses.field(default_factory=RulesConfig)
    time_control: TimeControl = dataclasses.field(default_factory=TimeControl)
    fault_policy: FaultPolicy = dataclasses.field(default_factory=FaultPolicy)
    candidates: tuple[str, ...] = ()
    sprt: SprtSettings | None = None
    anchor: str | None = None
    anchor_rating: float = 0.0
    source: Path | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError("name", f"must be a non-empty string; got {self.name!r}")
        if not self.id:
            object.__setattr__(self, "id", slug(self.name))
        if not _ID_RE.fullmatch(self.id):
            raise ConfigError("id", f"letters, digits, '.', '_' and '-' only, starting with "
                                    f"a letter or digit; got {self.id!r}")
        object.__setattr__(self, "output", Path(self.output))
        object.__setattr__(self, "bots", tuple(self.bots))
        object.__setattr__(self, "candidates", tuple(self.candidates))
        if self.concurrency < 1:
            raise ConfigError("concurrency", f"must be at least 1; got {self.concurrency}")
        if self.games < 1:
            raise ConfigError("games", f"must be at least 1; got {self.games}")
        if self.format not in FORMATS:
            raise ConfigError("format", f"must be one of {', '.join(FORMATS)}; "
                                        f"got {self.format!r}")
        if self.partnerships not in PARTNERSHIPS:
            raise ConfigError("partnerships", f"must be 'same' or 'mixed'; "
                                              f"got {self.partnerships!r}")
        if self.partnerships == "mixed" and self.rules.form is not Form.FOUR_HANDED:
            raise ConfigError("partnerships", f"'mixed' needs four-handed rules; the form "
                                              f"is {self.rules.form.value}")
        names = [b.name for b in self.bots]
        if len(names) < 2:
            raise ConfigError("bot", f"a tournament needs at least 2 bots; got {len(names)}")
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ConfigError(f"bot[{i}].name", f"{name!r} is also the name of "
                                                    f"bot[{names.index(name)}]")
        known = set(names)
        for c in self.candidates:
            if c not in known:
                raise ConfigError("gauntlet.candidates", f"{c!r} is not a bot; bots: "
                                                         f"{', '.join(names)}")
        if self.sprt is not None:
            for option in ("candidate", "baseline"):
                value = getattr(self.sprt, option)
                if value not in known:
                    raise ConfigError(f"sprt.{option}", f"{value!r} is not a bot; bots: "
                                                        f"{', '.join(names)}")
        if self.anchor is not None and self.anchor not in known:
            raise ConfigError("anchor", f"{self.anchor!r} is not a bot; bots: "
                                        f"{', '.join(names)}")
        if not math.isfinite(self.anchor_rating):
            raise ConfigError("anchor_rating", f"must be finite; got {self.anchor_rating!r}")
        if self.format == "gauntlet":
            if not self.candidates:
                raise ConfigError("gauntlet.candidates", "a gauntlet needs at least one "
                                                         "candidate")
            if len(self.candidates) == len(names):
                raise ConfigError("gauntlet.candidates", "every bot is a candidate; the "
                                                         "field (the other bots) is empty")
        if self.format == "sprt":
            if self.sprt is None:
                raise ConfigError("sprt.candidate", "format = \"sprt\" needs an [sprt] table "
                                                    "with candidate and baseline")
            if self.partnerships == "mixed":
                raise ConfigError("partnerships", "an SPRT match is head-to-head; it needs "
                                                  "partnerships = \"same\"")
        self.make_format()  # the remaining checks: enough bots for the form, and so on

    # ------------------------------------------------------------------ derived
    @property
    def field(self) -> tuple[str, ...]:
        """The gauntlet's field: the bots that are not candidates."""
        return tuple(b.name for b in self.bots if b.name not in self.candidates)

    def bot(self, name: str) -> BotEntry:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def make_format(self) -> TournamentFormat:
        """A fresh scheduler for this tournament (raises ConfigError naming the key)."""
        names = [b.name for b in self.bots]
        form = self.rules.form
        try:
            if self.format == "sprt":
                s = self.sprt
                if s is None:
                    raise ConfigError("sprt", "missing the [sprt] table")
                return SprtMatch(s.candidate, s.baseline, form, elo0=s.elo0, elo1=s.elo1,
                                 alpha=s.alpha, beta=s.beta, max_pairs=s.max_pairs,
                                 duplicate=self.duplicate, seed=self.seed)
            if self.format == "gauntlet":
                return Gauntlet(self.candidates, self.field, form,
                                games_per_pairing=self.games, duplicate=self.duplicate,
                                partnerships=self.partnerships, seed=self.seed)
            return RoundRobin(names, form, games_per_pairing=self.games,
                              duplicate=self.duplicate, partnerships=self.partnerships,
                              seed=self.seed)
        except ConfigError as e:
            option = _FORMAT_OPTIONS.get((self.format, e.option), e.option)
            if option == e.option:
                raise
            raise ConfigError(option, e.message) from None

    def to_dict(self) -> dict[str, Any]:
        """What defines the tournament's games, as JSON-ready data with a stable layout.

        Left out because they may change between runs of one tournament: ``concurrency``,
        ``output``, ``anchor``/``anchor_rating`` (they only affect reports) and how each
        bot is run (command, cwd, env, tokens, limits): only bot names are kept. Settings
        of other formats are left out too (``games``/``partnerships`` for SPRT, the
        ``[sprt]`` table unless the format is sprt, candidates unless it is gauntlet).
        """
        out: dict[str, Any] = {
            "schedule_version": SCHEDULE_VERSION,
            "name": self.name,
            "id": self.id,
            "seed": self.seed,
            "format": self.format,
            "duplicate": self.duplicate,
            "rules": self.rules.to_dict(),
            "tc": str(self.time_control),
            "fault_policy": str(self.fault_policy),
            "bots": [b.name for b in self.bots],
        }
        if self.format == "sprt":
            assert self.sprt is not None
            out["sprt"] = self.sprt.to_dict()
        else:
            out["games"] = self.games
            out["partnerships"] = self.partnerships
        if self.format == "gauntlet":
            out["candidates"] = list(self.candidates)
        return out


# Errors raised by the schedule classes use their own argument names; map them to keys.
_FORMAT_OPTIONS: dict[tuple[str, str], str] = {
    **{(f, "bots"): "bot" for f in FORMATS},
    ("gauntlet", "candidates"): "gauntlet.candidates",
    ("gauntlet", "field"): "bot",
    ("sprt", "bots"): "bot",
    ("sprt", "candidate"): "sprt.candidate",
    ("sprt", "baseline"): "sprt.baseline",
    ("sprt", "elo0"): "sprt.elo0",
    ("sprt", "elo1"): "sprt.elo1",
    ("sprt", "alpha"): "sprt.alpha",
    ("sprt", "beta"): "sprt.beta",
    ("sprt", "max_pairs"): "sprt.max_pairs",
}


# --------------------------------------------------------------------------- loading

_TOP_KEYS = ("name", "id", "output", "seed", "concurrency", "format", "games", "duplicate",
             "partnerships", "tc", "fault_policy", "anchor", "anchor_rating", "rules", "bot",
             "gauntlet", "sprt")
_BOT_KEYS = ("name", "command", "tokens", "cwd", "env", "cpu_seconds", "memory_mb")
_GAUNTLET_KEYS = ("candidates",)
_SPRT_KEYS = ("candidate", "baseline", "elo0", "elo1", "alpha", "beta", "max_pairs")
_RULE_KEYS = tuple(f.name for f in dataclasses.fields(RulesConfig))
_RULE_BOOLS = frozenset({"dealer_must_take", "allow_turned_down_suit", "stick_the_dealer",
                         "partner_may_go_alone", "lone_defender"})

# Override value types: "str", "int", "float", "bool", "list" (comma-separated), "opt"
# (a string, empty or "none" for none).
_OVERRIDE_KINDS: dict[str, str] = {
    "name": "str", "id": "str", "output": "str", "seed": "int", "concurrency": "int",
    "format": "str", "games": "int", "duplicate": "bool", "partnerships": "str",
    "tc": "str", "fault_policy": "str", "anchor": "opt", "anchor_rating": "float",
    "gauntlet.candidates": "list",
    "sprt.candidate": "str", "sprt.baseline": "str", "sprt.elo0": "float",
    "sprt.elo1": "float", "sprt.alpha": "float", "sprt.beta": "float",
    "sprt.max_pairs": "int",
    **{f"rules.{k}": ("bool" if k in _RULE_BOOLS else "int" if k == "target" else "str")
       for k in _RULE_KEYS},
}


def _allowed(keys: Sequence[str]) -> str:
    return "allowed keys: " + ", ".join(keys)


def _check_keys(table: Mapping[str, Any], allowed: Sequence[str], prefix: str) -> None:
    for key in table:
        if key not in allowed:
            path = f"{prefix}{key}"
            raise ConfigError(path, f"unknown key; {_allowed(allowed)}")


def _type_name(value: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _want_str(value: object, key: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, f"must be a string; got {_type_name(value)} ({value!r})")
    if not empty and not value.strip():
        raise ConfigError(key, "must not be empty")
    return value


def _want_int(value: object, key: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, f"must be an integer; got {_type_name(value)} ({value!r})")
    if minimum is not None and value < minimum:
        raise ConfigError(key, f"must be at least {minimum}; got {value}")
    return value


def _want_float(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key, f"must be a number; got {_type_name(value)} ({value!r})")
    if not math.isfinite(value):
        raise ConfigError(key, f"must be finite; got {value!r}")
    return float(value)


def _want_bool(value: object, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, f"must be true or false; got {_type_name(value)} ({value!r})")
    return value


def _want_table(value: object, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"must be a table; got {_type_name(value)} ({value!r})")
    return value


def _want_str_list(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(key, f"must be an array of strings; got {_type_name(value)} "
                               f"({value!r})")
    return tuple(_want_str(v, f"{key}[{i}]") for i, v in enumerate(value))


def _get(table: Mapping[str, Any], key: str, path: str, want: Callable[[object, str], Any],
         default: Any) -> Any:
    return want(table[key], path) if key in table else default


def _expand_python(arg: str) -> str:
    return arg.replace("{python}", sys.executable)


def _parse_bot(item: object, index: int, base_dir: Path) -> BotEntry:
    path = f"bot[{index}]"
    table = _want_table(item, path)
    _check_keys(table, _BOT_KEYS, path + ".")
    if "name" not in table:
        raise ConfigError(f"{path}.name", "every bot needs a name")
    name = _want_str(table["name"], f"{path}.name")
    if name != name.strip() or not name.isprintable():
        raise ConfigError(f"{path}.name", f"no surrounding spaces or control characters; "
                                          f"got {name!r}")
    command: tuple[str, ...] | None = None
    if "command" in table:
        raw = table["command"]
        key = f"{path}.command"
        if isinstance(raw, str):
            try:
                argv = shlex.split(raw)
            except ValueError as e:
                raise ConfigError(key, f"cannot split the command line: {e}") from None
        elif isinstance(raw, list):
            argv = list(_want_str_list(raw, key))
        else:
            raise ConfigError(key, f"must be a string or an array of strings; got "
                                   f"{_type_name(raw)} ({raw!r})")
        if not argv:
            raise ConfigError(key, "the command line is empty")
        command = tuple(_expand_python(a) for a in argv)
    tokens: tuple[str, ...] = ()
    if "tokens" in table:
        tokens = _want_str_list(table["tokens"], f"{path}.tokens")
        if not tokens:
            raise ConfigError(f"{path}.tokens", "a remote bot needs at least one token")
    if command is not None and tokens:
        raise ConfigError(f"{path}.tokens", "give either command (a local bot) or tokens "
                                            "(a remote bot), not both")
    if command is None and not tokens:
        raise ConfigError(f"{path}.command", "a bot needs a command (local) or tokens "
                                             "(remote)")
    cwd: str | None = None
    if "cwd" in table:
        folder = Path(_want_str(table["cwd"], f"{path}.cwd")).expanduser()
        cwd = str(folder if folder.is_absolute() else (base_dir / folder).resolve())
    env: dict[str, str] = {}
    if "env" in table:
        env_table = _want_table(table["env"], f"{path}.env")
        for k, v in env_table.items():
            env[k] = _want_str(v, f"{path}.env.{k}", empty=True)
    cpu = _get(table, "cpu_seconds", f"{path}.cpu_seconds",
               lambda v, k: _want_int(v, k, 1), None)
    mem = _get(table, "memory_mb", f"{path}.memory_mb", lambda v, k: _want_int(v, k, 1), None)
    return BotEntry(name=name, command=command, tokens=tokens, cwd=cwd, env=env,
                    cpu_seconds=cpu, memory_mb=mem)


def _parse_rules(value: object) -> RulesConfig:
    table = _want_table(value, "rules")
    _check_keys(table, _RULE_KEYS, "rules.")
    data = dict(table)
    if "deck" in data and not isinstance(data["deck"], bool) \
            and isinstance(data["deck"], int):
        data["deck"] = str(data["deck"])
    try:
        return RulesConfig.from_dict(data)
    except ConfigError as e:
        raise ConfigError(f"rules.{e.option}", e.message) from None
    except (TypeError, ValueError) as e:
        raise ConfigError("rules", str(e)) from None


def _parse_sprt(value: object) -> SprtSettings:
    table = _want_table(value, "sprt")
    _check_keys(table, _SPRT_KEYS, "sprt.")
    for key in ("candidate", "baseline"):
        if key not in table:
            raise ConfigError(f"sprt.{key}", "required in the [sprt] table")
    settings = SprtSettings(
        candidate=_want_str(table["candidate"], "sprt.candidate"),
        baseline=_want_str(table["baseline"], "sprt.baseline"),
        elo0=_get(table, "elo0", "sprt.elo0", _want_float, 0.0),
        elo1=_get(table, "elo1", "sprt.elo1", _want_float, 10.0),
        alpha=_get(table, "alpha", "sprt.alpha", _want_float, 0.05),
        beta=_get(table, "beta", "sprt.beta", _want_float, 0.05),
        max_pairs=_get(table, "max_pairs", "sprt.max_pairs",
                       lambda v, k: _want_int(v, k, 1), 2000),
    )
    if settings.candidate == settings.baseline:
        raise ConfigError("sprt.baseline", "must differ from the candidate")
    try:
        Sprt(settings.elo0, settings.elo1, settings.alpha, settings.beta)
    except ConfigError as e:
        raise ConfigError(f"sprt.{e.option}", e.message) from None
    return settings


def _build(data: Mapping[str, Any], base_dir: Path, source: Path | None) -> TournamentConfig:
    _check_keys(data, _TOP_KEYS, "")
    if "name" not in data:
        raise ConfigError("name", "the tournament needs a name")
    name = _want_str(data["name"], "name")
    fmt = _get(data, "format", "format", _want_str, "round-robin")
    fmt = fmt.strip().lower().replace("_", "-")
    if fmt not in FORMATS:
        raise ConfigError("format", f"must be one of {', '.join(FORMATS)}; got {fmt!r}")
    partnerships = _get(data, "partnerships", "partnerships", _want_str, "same")
    if partnerships not in PARTNERSHIPS:
        raise ConfigError("partnerships", f"must be 'same' or 'mixed'; got {partnerships!r}")
    tc_value = data.get("tc", "1.0+10")
    if isinstance(tc_value, bool) or not isinstance(tc_value, (str, int, float)):
        raise ConfigError("tc", f"must be a string like \"1.0+10\"; got "
                                f"{_type_name(tc_value)} ({tc_value!r})")
    bots_raw = data.get("bot", [])
    if not isinstance(bots_raw, list):
        raise ConfigError("bot", "must be an array of tables: write each bot as [[bot]]")
    gauntlet = _want_table(data.get("gauntlet", {}), "gauntlet")
    _check_keys(gauntlet, _GAUNTLET_KEYS, "gauntlet.")
    return TournamentConfig(
        name=name,
        id=_get(data, "id", "id", _want_str, ""),
        output=Path(_get(data, "output", "output", _want_str, "results")).expanduser(),
        seed=_get(data, "seed", "seed", _want_int, 1),
        concurrency=_get(data, "concurrency", "concurrency",
                         lambda v, k: _want_int(v, k, 1), _default_concurrency()),
        format=fmt,
        games=_get(data, "games", "games", lambda v, k: _want_int(v, k, 1), 4),
        duplicate=_get(data, "duplicate", "duplicate", _want_bool, True),
        partnerships=partnerships,
        rules=_parse_rules(data.get("rules", {})),
        time_control=TimeControl.parse(tc_value),
        fault_policy=FaultPolicy.parse(_get(data, "fault_policy", "fault_policy", _want_str,
                                            "forfeit")),
        bots=tuple(_parse_bot(item, i, base_dir) for i, item in enumerate(bots_raw)),
        candidates=_get(gauntlet, "candidates", "gauntlet.candidates", _want_str_list, ()),
        sprt=_parse_sprt(data["sprt"]) if "sprt" in data else None,
        anchor=_get(data, "anchor", "anchor", _want_str, None),
        anchor_rating=_get(data, "anchor_rating", "anchor_rating", _want_float, 0.0),
        source=source,
    )


def _parse_override(key: str, text: str) -> Any:
    kind = _OVERRIDE_KINDS.get(key)
    if kind is None:
        if key == "bot" or key.startswith(("bot.", "bot[")):
            raise ConfigError(key, "bots cannot be overridden; edit the configuration file")
        raise ConfigError(key, f"unknown key; {_allowed(sorted(_OVERRIDE_KINDS))}")
    value = text.strip()
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
        lowered = value.lower()
        if lowered in ("true", "yes", "on", "1"):
            return True
        if lowered in ("false", "no", "off", "0"):
            return False
        raise ConfigError(key, f"must be true or false; got {text!r}")
    if kind == "list":
        return [v.strip() for v in value.split(",") if v.strip()]
    if kind == "opt":
        return None if value.lower() in ("", "none") else value
    return value


def _apply_overrides(data: dict[str, Any], overrides: Mapping[str, str]) -> None:
    for key, text in overrides.items():
        if not isinstance(text, str):
            raise ConfigError(key, f"override values are strings; got {text!r}")
        value = _parse_override(key.strip(), text)
        *parents, leaf = key.strip().split(".")
        table = data
        for i, part in enumerate(parents):
            child = table.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(".".join(parents[: i + 1]), "must be a table")
            table = child
        if value is None:
            table.pop(leaf, None)
        else:
            table[leaf] = value


def _default_data() -> dict[str, Any]:
    return {
        "name": "sample-bots",
        "seed": 1,
        "format": "round-robin",
        "games": DEFAULT_SAMPLE_GAMES,
        "duplicate": True,
        "tc": "1.0+10",
        "rules": {"form": "four-handed"},
        "bot": [
            {"name": "random", "command": ["{python}", "-m", "sample_bots.random_bot"]},
            {"name": "heuristic", "command": ["{python}", "-m", "sample_bots.heuristic_bot"]},
        ],
    }


def load_config(path: str | os.PathLike[str] | None,
                overrides: Mapping[str, str] | None = None) -> TournamentConfig:
    """Read a TOML configuration (``None``: the built-in sample-bots tournament) and apply
    dotted-key ``overrides``. Raises ConfigError naming the offending key."""
    if path is None:
        data = _default_data()
        base_dir = Path.cwd()
        source = None
    else:
        source = Path(path)
        try:
            with open(source, "rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(str(source), f"not valid TOML: {e}") from None
        except OSError as e:
            raise ConfigError(str(source), f"cannot read the configuration file: "
                                           f"{e.strerror or e}") from None
        base_dir = source.resolve().parent
    if overrides:
        _apply_overrides(data, overrides)
    return _build(data, base_dir, source)


def default_config() -> TournamentConfig:
    """The built-in tournament: ``random`` against ``heuristic`` (the sample bots),
    four-handed, duplicate round-robin of :data:`DEFAULT_SAMPLE_GAMES` deal sets."""
    return load_config(None)
