"""The tournament configuration: a TOML file, command-line overrides, and the built-in
sample-bots tournament.

Every key, with its type, default, help text and checks, is declared once in
:mod:`harness.competition.options` (the README's key table is generated from it);
``examples/tournament.toml`` shows a complete file. The top level holds the tournament's
settings (``name``, ``format``, ``games``, ``tc``, ...), ``[rules]`` the rules (every
option of :class:`~harness.rules.config.RulesConfig`), each ``[[bot]]`` one bot (a local
``command`` or remote ``tokens``), and ``[gauntlet]`` / ``[sprt]`` the settings of those
formats.

``{python}`` in a command expands to :data:`sys.executable`; a relative ``cwd`` is
relative to the file's folder. Overrides are dotted keys with text values (``games=10``,
``rules.form=cutthroat``, ``sprt.elo1=20``, ``gauntlet.candidates=a,b``, ``anchor=`` for
none), read as :func:`~harness.competition.options.parse_text` says. Every error is a
:class:`~harness.errors.ConfigError` whose ``option`` is the key path, such as
``bot[1].comand`` (bots are counted from 0) or ``rules.target``; a file that is not valid
TOML is named by its path, with the line and column in the message.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.competition.options import (
    BOT_OPTIONS,
    BOX_FIELDS,
    FORMATS,
    OPTIONS,
    REQUIRED,
    Option,
    check_keys,
    default,
    default_bot,
    parse_text,
    read_value,
    want_table,
)
from harness.competition.policies import ladder_policies
from harness.errors import ConfigError, UnknownKeysError
from harness.referee.botlog import DEFAULT_LOG_LIMIT
from harness.referee.outcome import FaultPolicy, TimeControl
from harness.referee.pool import Entrant, check_entrant
from harness.referee.process import BotCommand
from harness.referee.session import hashed_token
from harness.results.sprt import Sprt
from harness.rules.config import RulesConfig
from harness.sandbox.box import BoxLimits
from harness.tournament.schedule import Gauntlet, RoundRobin, SprtMatch, TournamentFormat

__all__ = [
    "DEFAULT_SAMPLE_GAMES",
    "FORMATS",
    "SCHEDULE_VERSION",
    "BotEntry",
    "RawConfig",
    "SprtSettings",
    "TournamentConfig",
    "apply_overrides",
    "build_config",
    "default_config",
    "hash_tokens",
    "load_config",
    "read_config",
    "rules_from_table",
    "slug",
]

SCHEDULE_VERSION = 1
"""Part of :meth:`TournamentConfig.to_dict`: bump it when the schedule of an unchanged
configuration changes, so that resuming an old tournament is refused."""

DEFAULT_SAMPLE_GAMES = 12
"""Deal sets per pairing in the built-in sample-bots tournament (two games each with
duplicate): four bots, six pairings, 144 games."""

NOISY_HEURISTIC = "{python} -m sample_bots.heuristic_bot --epsilon"
"""The heuristic bot playing a random legal action with a given probability: sample
bots of strengths between random and heuristic, so every rating is measured."""

SAMPLE_SEED = {"EUCHRE_BOT_SEED": "2"}
"""The environment of the built-in tournament's bots that play at random: seeded, so that
the tournament is the same at every run, as its deals are. (Unseeded, the random bot won
one game in 72 or none, at random; with none it had no interval, only a bound.)"""

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def slug(text: str) -> str:
    """Lower-case letters and digits joined by single dashes (``"tournament"`` if empty)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tournament"


@dataclasses.dataclass(frozen=True)
class BotEntry:
    """One ``[[bot]]``: a local bot (``command``), a remote one (``tokens``) or one
    submitted to ``serve`` (``hosted``, which serve turns into a boxed local bot)."""

    name: str
    command: tuple[str, ...] | None = None
    tokens: tuple[str, ...] = ()
    hosted: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    cpu_seconds: int | None = None
    memory_mb: int | None = None
    log_limit: int = DEFAULT_LOG_LIMIT
    sandbox: bool = False
    box_memory_mib: int = default_bot("box_memory_mib")
    box_pids: int = default_bot("box_pids")
    box_cpus: float = default_bot("box_cpus")
    box_cpuset: tuple[int, ...] | None = None
    box_tmp_mib: int = default_bot("box_tmp_mib")

    def __post_init__(self) -> None:
        if self.hosted is not None:
            self._check_hosted()
        check_entrant(self.name, self.command if self.hosted is None else (self.hosted,),
                      self.tokens)
        if self.sandbox:
            if self.command is None:
                raise ConfigError("sandbox", f"{self.name}: only a local bot (a command) "
                                             f"runs in a box")
            if self.cwd is None:
                raise ConfigError("cwd", f"{self.name}: a sandboxed bot sees only its "
                                         f"cwd: give it a folder of its own")
            for key in ("cpu_seconds", "memory_mb"):
                if getattr(self, key) is not None:
                    raise ConfigError(key, f"{self.name}: a sandboxed bot has its box's "
                                           f"limits (box_*), not {key}")
            try:
                self.limits()
            except ValueError as e:
                raise ConfigError("sandbox", f"{self.name}: {e}") from None

    def _check_hosted(self) -> None:
        if not self.hosted:
            raise ConfigError("hosted", f"{self.name}: hosted names a submitted version, "
                                        f"NAME@N")
        for key in ("command", "tokens", "cwd", "cpu_seconds", "memory_mb"):
            if getattr(self, key):
                raise ConfigError(key, f"{self.name}: a hosted bot runs its submitted code "
                                       f"in a box: give hosted or {key}, not both")
        try:
            BoxLimits(**{field: getattr(self, key) for key, field in BOX_FIELDS.items()})
        except ValueError as e:
            raise ConfigError("hosted", f"{self.name}: {e}") from None

    def limits(self) -> BoxLimits | None:
        """The box of a sandboxed bot (None: not sandboxed)."""
        if not self.sandbox:
            return None
        return BoxLimits(**{field: getattr(self, key) for key, field in BOX_FIELDS.items()})

    @property
    def remote(self) -> bool:
        return self.command is None and self.hosted is None

    def entrant(self) -> Entrant:
        """The pool entrant: a local bot's command with its limits, or remote tokens."""
        if self.hosted is not None:
            raise ConfigError("hosted", f"{self.name}: hosted bots play on the serve they "
                                        f"were submitted to: start the tournament there "
                                        f"with euchre-harness ctl start")
        if self.command is None:
            return Entrant(self.name, None, self.tokens)
        return Entrant(self.name, BotCommand(self.command, cwd=self.cwd, env=dict(self.env),
                                             cpu_seconds=self.cpu_seconds,
                                             memory_mb=self.memory_mb,
                                             log_limit=self.log_limit,
                                             sandbox=self.limits()))


@dataclasses.dataclass(frozen=True)
class SprtSettings:
    """The ``[sprt]`` table: H0 Elo = ``elo0`` against H1 Elo = ``elo1``."""

    candidate: str
    baseline: str
    elo0: float = default("sprt.elo0")
    elo1: float = default("sprt.elo1")
    alpha: float = default("sprt.alpha")
    beta: float = default("sprt.beta")
    max_pairs: int = default("sprt.max_pairs")

    def __post_init__(self) -> None:
        if self.candidate == self.baseline:
            raise ConfigError("sprt.baseline", "must differ from the candidate")
        try:
            Sprt(self.elo0, self.elo1, self.alpha, self.beta)
        except ConfigError as e:
            raise ConfigError(f"sprt.{e.option}", e.message) from None


# Where each key's value lives on TournamentConfig, when not under its own name.
_ATTRS = {"tc": "time_control", "bot": "bots", "gauntlet.candidates": "candidates"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class TournamentConfig:
    """A validated tournament. Construct it with :func:`load_config` or
    :func:`default_config`, which check every key; direct construction runs the checks
    that involve several keys."""

    name: str
    bots: tuple[BotEntry, ...]
    id: str = default("id")  # "" = slug(name)
    output: Path = dataclasses.field(default_factory=lambda: default("output"))
    seed: int = default("seed")
    concurrency: int = dataclasses.field(default_factory=lambda: int(default("concurrency")))
    format: str = default("format")
    games: int = default("games")
    duplicate: bool = default("duplicate")
    partnerships: str = default("partnerships")
    rules: RulesConfig = dataclasses.field(
        default_factory=lambda: default("rules"))
    time_control: TimeControl = dataclasses.field(
        default_factory=lambda: default("tc"))
    fault_policy: FaultPolicy = dataclasses.field(
        default_factory=lambda: default("fault_policy"))
    candidates: tuple[str, ...] = default("gauntlet.candidates")
    sprt: SprtSettings | None = None
    anchor: str | None = default("anchor")
    anchor_rating: float = default("anchor_rating")
    max_startup_failures: int = default("max_startup_failures")
    scheduler: str | None = default("cluster.scheduler")
    workers: int = default("cluster.workers")
    ladder: Mapping[str, Any] = dataclasses.field(
        default_factory=lambda: {o.leaf: o.default_value() for o in _section("ladder")})
    source: Path | None = dataclasses.field(default=None, compare=False)
    for_ladder: bool = dataclasses.field(default=False, compare=False)
    """A ladder's file: its ``[[bot]]`` entries are house bots, and it may have none
    (registered bots dial in); the schedule's settings are not used."""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", slug(self.name))
        if not _ID_RE.fullmatch(self.id):
            raise ConfigError("id", f"letters, digits, '.', '_' and '-' only, starting with "
                                    f"a letter or digit; got {self.id!r}")
        object.__setattr__(self, "output", Path(self.output))
        object.__setattr__(self, "bots", tuple(self.bots))
        object.__setattr__(self, "candidates", tuple(self.candidates))
        names = [b.name for b in self.bots]
        if len(names) < 2 and not self.for_ladder:
            raise ConfigError("bot", f"a tournament needs at least 2 bots; got {len(names)}")
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ConfigError(f"bot[{i}].name", f"{name!r} is also the name of "
                                                    f"bot[{names.index(name)}]")
        self._check_bot_references(names)
        if self.format == "gauntlet":
            if not self.candidates:
                raise ConfigError("gauntlet.candidates", "a gauntlet needs at least one "
                                                         "candidate")
            if len(self.candidates) == len(names):
                raise ConfigError("gauntlet.candidates", "every bot is a candidate; the "
                                                         "field (the other bots) is empty")
        if self.format == "sprt":
            self._check_sprt()
        self._check_cluster()
        self._check_boxes()
        if not self.for_ladder:
            self.make_format()  # the remaining checks: enough bots for the form, and so on

    def _check_bot_references(self, names: list[str]) -> None:
        references = [("gauntlet.candidates", c) for c in self.candidates]
        if self.sprt is not None:
            references += [("sprt.candidate", self.sprt.candidate),
                           ("sprt.baseline", self.sprt.baseline)]
        if self.anchor is not None:
            references.append(("anchor", self.anchor))
        for option, value in references:
            if value not in names:
                raise ConfigError(option, f"{value!r} is not a bot; bots: {', '.join(names)}")

    def _check_sprt(self) -> None:
        if self.sprt is None:
            raise ConfigError("sprt.candidate", "format = \"sprt\" needs an [sprt] table "
                                                "with candidate and baseline")
        if self.partnerships == "mixed":
            raise ConfigError("partnerships", "an SPRT match is head-to-head; it needs "
                                              "partnerships = \"same\"")
        pair = (self.sprt.candidate, self.sprt.baseline)
        if self.anchor is not None and self.anchor not in pair:
            raise ConfigError("anchor", f"an SPRT plays only {pair[0]!r} and {pair[1]!r}, so "
                                        f"the anchor must be one of them; got {self.anchor!r} "
                                        f"(leave anchor out, or --set anchor=)")

    def _check_cluster(self) -> None:
        if self.scheduler and self.workers:
            raise ConfigError("cluster.workers", "give either a scheduler (a running "
                                                 "cluster) or workers (a local one), not both")
        if not self.on_cluster:
            return
        for i, bot in enumerate(self.bots):
            if bot.hosted is not None:
                raise ConfigError(f"bot[{i}].hosted", f"{bot.name}: hosted bots play on "
                                  "the serve they were submitted to, not on a cluster")
            if bot.command is None:
                raise ConfigError(f"bot[{i}].tokens", f"{bot.name} is a remote bot: remote "
                                  "bots connect to this machine's referee, so a tournament "
                                  "with one cannot play on a cluster; run it without "
                                  "--scheduler/--workers")

    def _check_boxes(self) -> None:
        """The CPU clock needs every bot boxed; a box must not show the tournament's
        file (its seed derives every deal) or its results."""
        for i, bot in enumerate(self.bots):
            if self.time_control.clock == "cpu" and not (bot.sandbox or bot.hosted):
                raise ConfigError(f"bot[{i}].sandbox", f"{bot.name}: clock = \"cpu\" "
                                  f"measures each bot's box: every bot needs sandbox = true")
            if not bot.sandbox or bot.cwd is None:
                continue
            folder = Path(bot.cwd).resolve()
            for what, path in (("the tournament's file", self.source),
                               ("the results folder", self.output)):
                if path is not None and folder in (Path(path).resolve(),
                                                   *Path(path).resolve().parents):
                    raise ConfigError(f"bot[{i}].cwd", f"{bot.name}: its box would show "
                                      f"{what} ({path}): give it a folder of its own")

    @property
    def clock(self) -> str:
        return self.time_control.clock

    # ------------------------------------------------------------------ derived
    @property
    def on_cluster(self) -> bool:
        """Whether the games are played on a Dask cluster."""
        return bool(self.scheduler) or self.workers > 0

    @property
    def public_deals(self) -> bool:
        """Whether remote bots play with the default seed: every deal seed derives from
        the seed and the deal set's number (which a game's id shows), so with the
        default seed a remote bot could work out every hand."""
        return any(b.remote for b in self.bots) and self.seed == default("seed")

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
            # Strangers' bots (remote, boxed or hosted) get deals of their own in each
            # pairing: a bot that played a round's deals in one pairing would know them
            # (every seat's cards it saw) in the next.
            shared = not any(b.remote or b.sandbox or b.hosted for b in self.bots)
            if self.format == "gauntlet":
                return Gauntlet(self.candidates, self.field, form,
                                games_per_pairing=self.games, duplicate=self.duplicate,
                                partnerships=self.partnerships, seed=self.seed,
                                shared_deals=shared)
            return RoundRobin(names, form, games_per_pairing=self.games,
                              duplicate=self.duplicate, partnerships=self.partnerships,
                              seed=self.seed, shared_deals=shared)
        except ConfigError as e:
            option = _FORMAT_OPTIONS.get((self.format, e.option), e.option)
            if option == e.option:
                raise
            raise ConfigError(option, e.message) from None

    def value(self, opt: Option) -> Any:
        """The value of the key ``opt`` in this configuration."""
        head, _, leaf = opt.key.rpartition(".")
        if head == "sprt":
            return getattr(self.sprt, leaf)
        if head == "cluster":
            return getattr(self, leaf)
        if head == "ladder":
            return self.ladder[leaf]
        return getattr(self, _ATTRS.get(opt.key, opt.key))

    def to_dict(self) -> dict[str, Any]:
        """What defines the tournament's games, as JSON-ready data with a stable layout:
        the keys whose ``stored`` formats (in :data:`~harness.competition.options.OPTIONS`)
        include this tournament's format.

        Left out because they may change between runs of one tournament: ``concurrency``,
        ``output``, ``anchor``/``anchor_rating`` (they only affect reports) and how each
        bot is run (command, cwd, env, tokens, limits): only bot names are kept. Settings
        of other formats are left out too (``games``/``partnerships`` for SPRT, the
        ``[sprt]`` table unless the format is sprt, candidates unless it is gauntlet).
        """
        out: dict[str, Any] = {"schedule_version": SCHEDULE_VERSION}
        for opt in OPTIONS:
            if self.format not in opt.stored:
                continue
            head, _, leaf = (opt.stored_as or opt.key).rpartition(".")
            table = out.setdefault(head, {}) if head else out
            table[leaf] = _to_json(self.value(opt))
        return out


def _to_json(value: Any) -> Any:
    if isinstance(value, RulesConfig):
        return value.to_dict()
    if isinstance(value, (TimeControl, FaultPolicy)):
        return str(value)
    if isinstance(value, tuple):
        return [v.name if isinstance(v, BotEntry) else v for v in value]
    return value


# Errors raised by the schedule classes use their own argument names; map them to keys.
_FORMAT_OPTIONS: dict[tuple[str, str], str] = {
    **{(f, "bots"): "bot" for f in FORMATS},
    ("gauntlet", "candidates"): "gauntlet.candidates",
    ("gauntlet", "field"): "bot",
    **{("sprt", o.leaf): o.key for o in OPTIONS if o.key.startswith("sprt.")},
}


# --------------------------------------------------------------------------- loading


def _section(prefix: str) -> tuple[Option, ...]:
    """The keys of the table ``prefix`` ("" = the top level, without sub-tables)."""
    if not prefix:
        return tuple(o for o in OPTIONS if "." not in o.key)
    return tuple(o for o in OPTIONS if o.key.startswith(prefix + "."))


def _read_table(table: Mapping[str, Any], options: tuple[Option, ...],
                prefix: str) -> dict[str, Any]:
    """Every key of ``options`` from ``table``: checked, converted, or its default."""
    out: dict[str, Any] = {}
    for opt in options:
        if opt.kind == "section":
            continue
        path = prefix + opt.leaf
        if opt.leaf in table:
            out[opt.leaf] = read_value(opt, table[opt.leaf], path)
        elif opt.default is REQUIRED:
            raise ConfigError(path, opt.required)
        else:
            out[opt.leaf] = opt.default_value()
    return out


def _expand_python(arg: str) -> str:
    return arg.replace("{python}", sys.executable)


def _parse_bot(item: object, index: int, base_dir: Path) -> BotEntry:
    path = f"bot[{index}]"
    table = want_table(item, path)
    check_keys(table, [o.key for o in BOT_OPTIONS], path + ".")
    values = _read_table(table, BOT_OPTIONS, path + ".")
    raw = values["command"]
    if raw is not None:
        try:
            argv = shlex.split(raw) if isinstance(raw, str) else raw
        except ValueError as e:
            raise ConfigError(f"{path}.command", f"cannot split the command line: {e}") \
                from None
        values["command"] = tuple(_expand_python(a) for a in argv)
    if values["cwd"] is not None:
        folder = Path(values["cwd"]).expanduser()
        values["cwd"] = str(folder if folder.is_absolute() else (base_dir / folder).resolve())
    values["env"] = values["env"] or {}
    try:
        return BotEntry(**values)
    except ConfigError as e:
        raise ConfigError(f"{path}.{e.option}", e.message) from None


def rules_from_table(value: object) -> RulesConfig:
    """A ``[rules]`` table (or the same keys from flags) as a :class:`RulesConfig`; an
    error names the key as ``rules.KEY``."""
    table = want_table(value, "rules")
    check_keys(table, [f.name for f in dataclasses.fields(RulesConfig)], "rules.")
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
    table = want_table(value, "sprt")
    options = _section("sprt")
    check_keys(table, [o.leaf for o in options], "sprt.")
    return SprtSettings(**_read_table(table, options, "sprt."))


@dataclasses.dataclass
class RawConfig:
    """A configuration as read, before its checks: ``data`` is the TOML document."""

    data: dict[str, Any]
    base_dir: Path  # relative bot folders are relative to this
    source: Path | None = None


SECTIONS = ("cluster", "gauntlet", "ladder", "sprt")


def _unknown_keys(data: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
    """Every unknown key of the document, in every table: ``(prefix, key, allowed)``."""
    found: list[tuple[str, str, list[str]]] = []

    def scan(table: object, allowed: list[str], prefix: str) -> None:
        if isinstance(table, dict):  # other types are reported when the table is read
            found.extend((prefix, str(k), allowed) for k in table if k not in allowed)

    scan(data, [o.key for o in _section("")] + list(SECTIONS), "")
    scan(data.get("rules"), [f.name for f in dataclasses.fields(RulesConfig)], "rules.")
    for name in SECTIONS:
        scan(data.get(name), [o.leaf for o in _section(name)], f"{name}.")
    bots = data.get("bot")
    for i, bot in enumerate(bots if isinstance(bots, list) else []):
        scan(bot, [o.key for o in BOT_OPTIONS], f"bot[{i}].")
    return found


def build_config(raw: RawConfig, *, for_ladder: bool = False) -> TournamentConfig:
    """Check every key of ``raw`` and build the tournament, or with ``for_ladder`` a
    ladder's configuration (ConfigError names the key)."""
    data = raw.data
    top = _section("")
    unknown = _unknown_keys(data)
    if unknown:
        raise UnknownKeysError(unknown)
    values = _read_table(data, top, "")
    bots_raw = data.get("bot", [])
    if not isinstance(bots_raw, list):
        raise ConfigError("bot", "must be an array of tables: write each bot as [[bot]]")
    gauntlet = want_table(data.get("gauntlet", {}), "gauntlet")
    check_keys(gauntlet, [o.leaf for o in _section("gauntlet")], "gauntlet.")
    candidates = _read_table(gauntlet, _section("gauntlet"), "gauntlet.")["candidates"]
    cluster = want_table(data.get("cluster", {}), "cluster")
    check_keys(cluster, [o.leaf for o in _section("cluster")], "cluster.")
    values.update(_read_table(cluster, _section("cluster"), "cluster."))
    ladder = want_table(data.get("ladder", {}), "ladder")
    check_keys(ladder, [o.leaf for o in _section("ladder")], "ladder.")
    values["ladder"] = _read_table(ladder, _section("ladder"), "ladder.")
    try:  # what ties two keys together (each key's own range is checked above)
        ladder_policies(values["ladder"])
    except ConfigError as e:
        raise ConfigError(f"ladder.{e.option}", e.message) from None
    tc, clock = values.pop("tc"), values.pop("clock")
    values["time_control"] = tc if clock == "wall" else tc.with_clock(clock)
    return TournamentConfig(
        **values,
        rules=rules_from_table(data.get("rules", {})),
        bots=tuple(_parse_bot(item, i, raw.base_dir) for i, item in enumerate(bots_raw)),
        candidates=candidates,
        sprt=_parse_sprt(data["sprt"]) if "sprt" in data else None,
        source=raw.source,
        for_ladder=for_ladder,
    )


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, str]) -> None:
    """Set dotted ``KEY: TEXT`` overrides in a TOML document (an empty ``anchor`` removes
    it). Raises ConfigError naming an unknown key or a value of the wrong type."""
    for key, text in overrides.items():
        if not isinstance(text, str):
            raise ConfigError(key, f"override values are strings; got {text!r}")
        value = parse_text(key.strip(), text)
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
        "games": DEFAULT_SAMPLE_GAMES,
        # The bots that play at random restart from SAMPLE_SEED (and their seat) at
        # every game.
        "bot": [
            {"name": "random", "command": ["{python}", "-m", "sample_bots.random_bot"],
             "env": SAMPLE_SEED},
            {"name": "noisy-40", "command": f"{NOISY_HEURISTIC} 0.4", "env": SAMPLE_SEED},
            {"name": "noisy-15", "command": f"{NOISY_HEURISTIC} 0.15", "env": SAMPLE_SEED},
            {"name": "heuristic", "command": ["{python}", "-m", "sample_bots.heuristic_bot"]},
        ],
    }


def read_config(path: str | os.PathLike[str] | None) -> RawConfig:
    """Read a TOML configuration (``None``: the built-in sample-bots tournament) without
    checking it. A file that cannot be read or parsed raises ConfigError naming it."""
    if path is None:
        return RawConfig(_default_data(), Path.cwd())
    source = Path(path)
    try:
        with open(source, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(source), f"not valid TOML: {e}") from None
    except OSError as e:
        raise ConfigError(str(source), f"cannot read the configuration file: "
                                       f"{e.strerror or e}") from None
    return RawConfig(data, source.resolve().parent, source)


def hash_tokens(text: str) -> str:
    """A configuration file's text with every remote bot's token replaced by its
    ``sha256:HEX`` form (:func:`~harness.referee.session.hashed_token`), which admits the
    same bot: what a referee keeps of a configuration it was sent holds no token in
    clear, comments included. Nothing else changes; ConfigError if that cannot be done (a
    token not written as a plain quoted string, or part of another value of the file)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError("config", f"not valid TOML: {e}") from None
    bots = document.get("bot", [])
    bots = [b for b in bots if isinstance(b, dict)] if isinstance(bots, list) else []
    clear = {str(t) for bot in bots for t in bot.get("tokens", [])}
    for bot in bots:  # the document as it must read afterwards
        if "tokens" in bot:
            bot["tokens"] = [hashed_token(str(t)) for t in bot["tokens"]]
    out = text
    for token in sorted(clear, key=len, reverse=True):
        # Wherever it stands: its quoted value, and a comment ("# alice's seat: TOKEN");
        # the check below refuses the file if that changed any other value.
        out = out.replace(token, hashed_token(token))
    if tomllib.loads(out) != document:
        raise ConfigError("bot.tokens", "cannot keep this configuration with its tokens "
                                        "hashed: write each token as a plain quoted string "
                                        "(\"...\"), and let no other value of the file "
                                        "hold a token")
    return out


def load_config(path: str | os.PathLike[str] | None,
                overrides: Mapping[str, str] | None = None, *,
                for_ladder: bool = False) -> TournamentConfig:
    """Read a TOML configuration (``None``: the built-in sample-bots tournament) and apply
    dotted-key ``overrides``; ``for_ladder``: a ladder's file (see
    :attr:`TournamentConfig.for_ladder`). Raises ConfigError naming the offending key."""
    raw = read_config(path)
    if overrides:
        apply_overrides(raw.data, overrides)
    return build_config(raw, for_ladder=for_ladder)


def default_config() -> TournamentConfig:
    """The built-in tournament of the sample bots: ``random``, ``heuristic`` and two
    noisy heuristics between them (see :data:`NOISY_HEURISTIC`), four-handed, duplicate
    round-robin of :data:`DEFAULT_SAMPLE_GAMES` deal sets per pairing."""
    return load_config(None)
