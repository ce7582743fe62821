"""Tests of harness.tournament.config: the TOML layout, overrides, errors and defaults."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from harness.competition.options import BOT_OPTIONS, FORMATS, OPTIONS, REQUIRED
from harness.errors import ConfigError
from harness.referee.outcome import FaultPolicy, PolicyKind, TimeControl
from harness.referee.pool import Entrant
from harness.referee.process import BotCommand
from harness.referee.session import SlotRegistry, hashed_token
from harness.rules.cards import DeckKind
from harness.rules.config import Form, LonerLead
from harness.tournament.config import (
    DEFAULT_SAMPLE_GAMES,
    BotEntry,
    SprtSettings,
    TournamentConfig,
    default_config,
    hash_tokens,
    load_config,
    slug,
)
from harness.tournament.schedule import Gauntlet, RoundRobin, SprtMatch

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "tournament.toml"

BASE = """
name = "t"
[[bot]]
name = "a"
command = "run-a"
[[bot]]
name = "b"
command = ["run-b", "--x"]
"""

BOT_A = '[[bot]]\nname = "a"\ncommand = "a"\n'
BOT_B = '[[bot]]\nname = "b"\ncommand = "b"\n'
BOT_C = '[[bot]]\nname = "c"\ncommand = "c"\n'


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(textwrap.dedent(text))
    return path


def load_text(tmp_path: Path, text: str, **overrides: str) -> TournamentConfig:
    return load_config(write(tmp_path, text), overrides)


# --------------------------------------------------------------------------- example


def test_example_round_trip() -> None:
    cfg = load_config(EXAMPLE)
    assert cfg.name == "sample-bots-example" and cfg.id == "sample-bots-example"
    assert cfg.format == "round-robin" and cfg.games == 8 and cfg.duplicate
    assert cfg.partnerships == "same" and cfg.seed == 1 and cfg.concurrency == 2
    assert cfg.output == Path("results")
    assert cfg.time_control == TimeControl(1.0, 10.0)
    assert cfg.fault_policy == FaultPolicy()
    assert cfg.anchor == "random" and cfg.anchor_rating == 0.0
    assert cfg.rules.form is Form.FOUR_HANDED and cfg.rules.deck is DeckKind.D24
    assert cfg.rules.target == 10 and cfg.rules.loner_lead is LonerLead.LEFT_OF_LONE
    assert [b.name for b in cfg.bots] == ["random", "heuristic", "search"]
    random_bot, heuristic, search = cfg.bots
    assert random_bot.command == (sys.executable, "-m", "sample_bots.random_bot")
    assert heuristic.command == (sys.executable, "-m", "sample_bots.heuristic_bot")
    assert search.command == (sys.executable, "-m", "sample_bots.search_bot", "--ms", "20",
                              "--seed", "1")
    assert random_bot.cwd == str(EXAMPLE.parent)
    assert random_bot.env == {"EUCHRE_BOT_SEED": "7"}
    assert (random_bot.cpu_seconds, random_bot.memory_mb) == (3600, 2048)
    assert cfg.source == EXAMPLE
    # Stable, JSON-ready, and the same on every load.
    data = cfg.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert load_config(EXAMPLE).to_dict() == data
    assert load_config(EXAMPLE) == cfg
    fmt = cfg.make_format()
    assert isinstance(fmt, RoundRobin) and fmt.total() == 48  # 3 pairings x 8 deal sets x 2


def test_example_sections_that_are_commented_out_work(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    text = text.replace("# [gauntlet]\n# candidates", "[gauntlet]\ncandidates")
    text = text.replace('# [sprt]\n# candidate = "heuristic"\n# baseline = "random"',
                        '[sprt]\ncandidate = "heuristic"\nbaseline = "random"')
    path = tmp_path / "example.toml"
    path.write_text(text)
    g = load_config(path, {"format": "gauntlet"})
    assert g.candidates == ("heuristic",) and g.field == ("random", "search")
    assert isinstance(g.make_format(), Gauntlet)
    s = load_config(path, {"format": "sprt"})
    assert s.sprt is not None and s.sprt.candidate == "heuristic" and s.sprt.max_pairs == 2000
    assert isinstance(s.make_format(), SprtMatch)


def test_to_dict_ignores_run_settings_but_not_the_games(tmp_path: Path) -> None:
    base = load_text(tmp_path, BASE).to_dict()
    assert "concurrency" not in base and "output" not in base
    assert load_text(tmp_path, BASE, concurrency="7", output="elsewhere").to_dict() == base
    for key, value in (("games", "9"), ("seed", "2"), ("rules.target", "5"),
                       ("tc", "2+0"), ("duplicate", "false")):
        assert load_text(tmp_path, BASE, **{key: value}).to_dict() != base, key


# --------------------------------------------------------------------------- defaults


def test_default_config_is_valid_and_schedules_games(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    cfg = default_config()
    assert cfg.name == "sample-bots" and cfg.id == "sample-bots"
    assert cfg.format == "round-robin" and cfg.duplicate and cfg.seed == 1
    assert cfg.rules.form is Form.FOUR_HANDED
    assert str(cfg.time_control) == "1+10"
    assert cfg.games == DEFAULT_SAMPLE_GAMES
    heuristic = (sys.executable, "-m", "sample_bots.heuristic_bot")
    assert {b.name: b.command for b in cfg.bots} == {
        "random": (sys.executable, "-m", "sample_bots.random_bot"),
        "noisy-40": (*heuristic, "--epsilon", "0.4"),
        "noisy-15": (*heuristic, "--epsilon", "0.15"),
        "heuristic": heuristic}
    fmt = cfg.make_format()
    games = list(fmt.games())
    # Four bots: six pairings, each on two tables per deal set.
    assert len(games) == fmt.total() == 6 * 2 * DEFAULT_SAMPLE_GAMES
    assert len({frozenset(g.seats) for g in games}) == 6
    assert load_config(None) == cfg
    assert load_config(None, {"games": "3"}).games == 3


def test_entrant_local_and_remote(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE + """
        [[bot]]
        name = "far"
        tokens = ["t1", "t2"]
    """.replace("        ", ""))
    a = cfg.bot("a").entrant()
    assert a.name == "a" and a.command is not None and a.command.command == ("run-a",)
    b = cfg.bot("b").entrant()
    assert b.command is not None and b.command.command == ("run-b", "--x")
    far = cfg.bot("far").entrant()
    assert far.remote and far.tokens == ("t1", "t2")
    with_limits = BotEntry("x", ("p",), cwd="/tmp", env={"K": "V"}, cpu_seconds=5,
                           memory_mb=64).entrant()
    assert with_limits.command is not None
    assert (with_limits.command.cwd, dict(with_limits.command.env),
            with_limits.command.cpu_seconds, with_limits.command.memory_mb) == \
        ("/tmp", {"K": "V"}, 5, 64)


def test_python_placeholder_and_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_text(tmp_path, """
        name = "t"
        [[bot]]
        name = "a"
        command = "{python} -u bot.py --name={name}"
        cwd = "sub"
        [[bot]]
        name = "b"
        command = ["{python}", "b.py"]
        cwd = "/abs"
    """)
    a, b = cfg.bots
    assert a.command == (sys.executable, "-u", "bot.py", "--name={name}")
    assert a.cwd == str(tmp_path.resolve() / "sub")
    assert b.command == (sys.executable, "b.py") and b.cwd == "/abs"
    monkeypatch.chdir(tmp_path)
    rel = load_config(Path("t.toml"))
    assert rel.bots[0].cwd == str(tmp_path.resolve() / "sub")


# --------------------------------------------------------------------------- overrides


def test_overrides_parse_types(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE + BOT_C, **{
        "games": "10", "rules.form": "cutthroat", "rules.stick_the_dealer": "true",
        "tc": "0.5+5", "concurrency": "1", "duplicate": "no", "seed": "42",
        "fault_policy": "strikes:2", "anchor": "b", "anchor_rating": "1500",
        "rules.deck": "32", "rules.target": "5", "output": "out", "id": "run-1",
    })
    assert cfg.games == 10 and cfg.concurrency == 1 and cfg.seed == 42
    assert cfg.rules.form is Form.CUTTHROAT and cfg.rules.stick_the_dealer is True
    assert cfg.rules.deck is DeckKind.D32 and cfg.rules.target == 5
    assert cfg.time_control == TimeControl(0.5, 5.0)
    assert cfg.duplicate is False
    assert cfg.fault_policy == FaultPolicy(PolicyKind.STRIKES, 2)
    assert cfg.anchor == "b" and cfg.anchor_rating == 1500.0
    assert cfg.output == Path("out") and cfg.id == "run-1"
    with pytest.raises(ConfigError) as err:  # cutthroat needs three bots
        load_text(tmp_path, BASE, **{"rules.form": "cutthroat"})
    assert err.value.option == "bot"


def test_override_sprt_and_gauntlet(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE, **{
        "format": "sprt", "sprt.candidate": "a", "sprt.baseline": "b", "sprt.elo1": "20",
        "sprt.elo0": "-5", "sprt.max_pairs": "30", "sprt.alpha": "0.1"})
    assert cfg.sprt is not None
    assert (cfg.sprt.elo0, cfg.sprt.elo1, cfg.sprt.alpha, cfg.sprt.beta,
            cfg.sprt.max_pairs) == (-5.0, 20.0, 0.1, 0.05, 30)
    fmt = cfg.make_format()
    assert isinstance(fmt, SprtMatch) and fmt.max_pairs == 30
    assert cfg.to_dict()["sprt"]["elo1"] == 20.0
    g = load_text(tmp_path, BASE + '[[bot]]\nname = "c"\ncommand = "c"\n',
                  **{"format": "gauntlet", "gauntlet.candidates": "a, c"})
    assert g.candidates == ("a", "c") and g.field == ("b",)
    assert load_text(tmp_path, 'anchor = "a"\n' + BASE).anchor == "a"
    assert load_text(tmp_path, 'anchor = "a"\n' + BASE, anchor="").anchor is None


@pytest.mark.parametrize(("key", "value", "option"), [
    ("games", "ten", "games"),
    ("concurrency", "1.5", "concurrency"),
    ("duplicate", "maybe", "duplicate"),
    ("sprt.elo1", "x", "sprt.elo1"),
    ("gamez", "3", "gamez"),
    ("rules.colour", "red", "rules.colour"),
    ("bot.a.command", "x", "bot.a.command"),
    ("tc", "fast", "tc"),
    ("rules.form", "five", "rules.form"),
    ("games", "0", "games"),
])
def test_bad_overrides_name_the_key(tmp_path: Path, key: str, value: str,
                                    option: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_text(tmp_path, BASE, **{key: value})
    assert err.value.option == option


@pytest.mark.parametrize(("key", "value", "message"), [
    ("provisional_sets", "-1", "must be at least 0; got -1"),
    ("closeness_elo", "0", "must be > 0; got 0.0"),
    ("repeat_weight", "-0.5", "must be at least 0; got -0.5"),
    ("repeat_cap", "0", "must be > 0; got 0.0"),
    ("bench_faults", "0", "must be at least 1; got 0"),
    ("bench_faults", "11", "must be from 1 to bench_window (10); got 11"),
    ("bench_seconds", "0", "must be > 0; got 0.0"),
    ("bench_growth", "0.5", "must be at least 1; got 0.5"),
    ("bench_max_seconds", "10", "must be >= bench_seconds"),
    ("cluster_retry_seconds", "0", "must be > 0; got 0.0"),
    ("build_seconds", "-1", "must be > 0; got -1.0"),
])
def test_every_ladder_key_is_checked_when_the_file_is_read_under_its_own_name(
        tmp_path: Path, key: str, value: str, message: str) -> None:
    # One name from the file to the code: the key is the policy's field, and the check
    # is the schema's (a tournament's file has the [ladder] keys too).
    with pytest.raises(ConfigError) as err:
        load_text(tmp_path, BASE, **{f"ladder.{key}": value})
    assert (err.value.option, err.value.message) == (f"ladder.{key}", message)


# --------------------------------------------------------------------------- errors



@pytest.mark.parametrize(("text", "option", "fragment"), [
    ('name = "t"\ncolour = 1\n' + BOT_A + BOT_B, "colour", "keys here: name, id"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncomand = "b"\n', "bot[1].comand",
     "did you mean bot[1].command?"),
    ('name = "t"\n' + BOT_A, "bot", "at least 2"),
    ('name = "t"\n' + BOT_A + BOT_A, "bot[1].name", "bot[0]"),
    ('name = "t"\ngames = "4"\n' + BOT_A + BOT_B, "games", "integer"),
    ('name = "t"\ngames = 2.5\n' + BOT_A + BOT_B, "games", "integer"),
    ('name = "t"\nduplicate = 1\n' + BOT_A + BOT_B, "duplicate", "true or false"),
    ('name = "t"\nseed = true\n' + BOT_A + BOT_B, "seed", "integer"),
    ('name = "t"\nconcurrency = 0\n' + BOT_A + BOT_B, "concurrency", "at least 1"),
    ('name = 3\n' + BOT_A + BOT_B, "name", "string"),
    (BOT_A + BOT_B, "name", "name"),
    ('name = "t"\nid = "a b"\n' + BOT_A + BOT_B, "id", "letters"),
    ('name = "t"\nformat = "swiss"\n' + BOT_A + BOT_B, "format", "round-robin"),
    ('name = "t"\npartnerships = "odd"\n' + BOT_A + BOT_B, "partnerships", "mixed"),
    ('name = "t"\npartnerships = "mixed"\n[rules]\nform = "two-handed"\n' + BOT_A + BOT_B,
     "partnerships", "four-handed"),
    ('name = "t"\ntc = true\n' + BOT_A + BOT_B, "tc", "string"),
    ('name = "t"\ntc = "-1"\n' + BOT_A + BOT_B, "tc", ""),
    ('name = "t"\nfault_policy = "lenient"\n' + BOT_A + BOT_B, "fault_policy", ""),
    ('name = "t"\nanchor = "z"\n' + BOT_A + BOT_B, "anchor", "not a bot"),
    ('name = "t"\nanchor_rating = "high"\n' + BOT_A + BOT_B, "anchor_rating", "number"),
    ('name = "t"\n[rules]\ntarget = 0\n' + BOT_A + BOT_B, "rules.target", "at least 1"),
    ('name = "t"\n[rules]\ncolour = "red"\n' + BOT_A + BOT_B, "rules.colour", "keys here: form"),
    ('name = "t"\n[rules]\nform = "two-handed"\nlone_defender = true\n' + BOT_A + BOT_B,
     "rules.lone_defender", "two-handed"),
    ('name = "t"\n[rules]\ndeck = 52\n' + BOT_A + BOT_B, "rules.deck", "24"),
    ('name = "t"\nrules = 4\n' + BOT_A + BOT_B, "rules", "table"),
    ('name = "t"\n[rules]\nform = "cutthroat"\n' + BOT_A + BOT_B, "bot", "at least 3"),
    ('name = "t"\nbot = "a"\n', "bot", "[[bot]]"),
    ('name = "t"\n[[bot]]\ncommand = "a"\n' + BOT_B, "bot[0].name", "needs a name"),
    ('name = "t"\n[[bot]]\nname = ""\ncommand = "a"\n' + BOT_B, "bot[0].name", "empty"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\n', "bot[1].command", "tokens"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = "b"\ntokens = ["x"]\n',
     "bot[1].tokens", "not both"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = []\n', "bot[1].command",
     "empty"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = 5\n', "bot[1].command",
     "string"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = "b \'x"\n', "bot[1].command",
     "split"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = ["b", 1]\n',
     "bot[1].command[1]", "string"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ntokens = []\n', "bot[1].tokens",
     "at least one"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = "b"\nenv = { K = 1 }\n',
     "bot[1].env.K", "string"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = "b"\ncpu_seconds = 0\n',
     "bot[1].cpu_seconds", "at least 1"),
    ('name = "t"\n' + BOT_A + '[[bot]]\nname = "b"\ncommand = "b"\nmemory_mb = "1G"\n',
     "bot[1].memory_mb", "integer"),
    ('name = "t"\nformat = "gauntlet"\n' + BOT_A + BOT_B, "gauntlet.candidates",
     "at least one"),
    ('name = "t"\nformat = "gauntlet"\n[gauntlet]\ncandidates = ["z"]\n' + BOT_A + BOT_B,
     "gauntlet.candidates", "not a bot"),
    ('name = "t"\nformat = "gauntlet"\n[gauntlet]\ncandidates = ["a", "b"]\n' + BOT_A
     + BOT_B, "gauntlet.candidates", "field"),
    ('name = "t"\n[gauntlet]\ncandidates = "a"\n' + BOT_A + BOT_B, "gauntlet.candidates",
     "array"),
    ('name = "t"\n[gauntlet]\nfield = ["a"]\n' + BOT_A + BOT_B, "gauntlet.field",
     "keys here: candidates"),
    ('name = "t"\nformat = "gauntlet"\n[rules]\nform = "cutthroat"\n[gauntlet]\n'
     'candidates = ["a", "b"]\n' + BOT_A + BOT_B + BOT_C, "bot", "field"),
    ('name = "t"\nformat = "sprt"\n' + BOT_A + BOT_B, "sprt.candidate", "[sprt]"),
    ('name = "t"\n[sprt]\ncandidate = "a"\n' + BOT_A + BOT_B, "sprt.baseline", "required"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "z"\n' + BOT_A + BOT_B,
     "sprt.baseline", "not a bot"),
    ('name = "t"\n[sprt]\ncandidate = "z"\nbaseline = "a"\n' + BOT_A + BOT_B,
     "sprt.candidate", "not a bot"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "a"\n' + BOT_A + BOT_B,
     "sprt.baseline", "differ"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "b"\nelo1 = -1\n' + BOT_A + BOT_B,
     "sprt.elo1", "greater"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "b"\nalpha = 0.7\n' + BOT_A + BOT_B,
     "sprt.alpha", "0.5"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "b"\nmax_pairs = 0\n' + BOT_A
     + BOT_B, "sprt.max_pairs", "at least 1"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "b"\nelo0 = "0"\n' + BOT_A + BOT_B,
     "sprt.elo0", "number"),
    ('name = "t"\n[sprt]\ncandidate = "a"\nbaseline = "b"\nmargin = 1\n' + BOT_A + BOT_B,
     "sprt.margin", "keys here: candidate"),
    ('name = "t"\nformat = "sprt"\n[rules]\nform = "cutthroat"\n[sprt]\ncandidate = "a"\n'
     'baseline = "b"\n' + BOT_A + BOT_B + BOT_C, "format", "cutthroat"),
    ('name = "t"\nformat = "sprt"\npartnerships = "mixed"\n[sprt]\ncandidate = "a"\n'
     'baseline = "b"\n' + BOT_A + BOT_B, "partnerships", "head-to-head"),
])
def test_errors_name_the_key(tmp_path: Path, text: str, option: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert err.value.option == option, err.value
    assert fragment in err.value.message


def test_toml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "t"\ngames = = 3\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.option == str(path)
    assert "line 2" in err.value.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "nope.toml")
    assert err.value.option == str(tmp_path / "nope.toml")


def test_slug_and_default_id(tmp_path: Path) -> None:
    assert slug("My Big  Tournament!") == "my-big-tournament"
    assert slug("***") == "tournament"
    cfg = load_text(tmp_path, BASE.replace('name = "t"', 'name = "Spring Cup 2025"'))
    assert cfg.id == "spring-cup-2025"


def test_mixed_partnerships_config(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE + BOT_C, partnerships="mixed", games="2")
    fmt = cfg.make_format()
    assert isinstance(fmt, RoundRobin) and fmt.partnerships == "mixed"
    assert fmt.total() == 15 * 2 * 2
    assert all(len(side) == 2 for g in fmt.games() for side in g.sides)


# --------------------------------------------------------------------------- the schema


def test_overrides_accept_toml_text_as_well_as_plain_text(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE + BOT_C, **{
        "rules.form": '"two-handed"', "name": '"Quoted Cup"', "games": "7",
        "gauntlet.candidates": '["a", "c"]', "format": "gauntlet",
        "rules.stick_the_dealer": "true"})
    assert cfg.rules.form is Form.TWO_HANDED and cfg.name == "Quoted Cup"
    assert cfg.games == 7 and cfg.candidates == ("a", "c")
    assert cfg.rules.stick_the_dealer is True
    plain = load_text(tmp_path, BASE, **{"rules.form": "two-handed", "name": "2025"})
    assert plain.rules.form is Form.TWO_HANDED and plain.name == "2025"


def test_every_default_is_the_schemas(tmp_path: Path) -> None:
    cfg = load_text(tmp_path, BASE + '[sprt]\ncandidate = "a"\nbaseline = "b"\n')
    for opt in OPTIONS:
        if opt.default is REQUIRED or opt.key in ("bot", "id"):
            continue
        assert cfg.value(opt) == opt.default_value(), opt.key
    assert cfg.id == "t"
    direct = TournamentConfig(name="t", bots=cfg.bots)  # the dataclass has the same defaults
    assert direct == dataclasses.replace(cfg, sprt=None)
    assert SprtSettings("a", "b") == cfg.sprt


def test_to_dict_keeps_the_keys_the_schema_stores_for_the_format(tmp_path: Path) -> None:
    text = BASE + BOT_C + '[gauntlet]\ncandidates = ["a"]\n[sprt]\ncandidate = "a"\n' \
                          'baseline = "b"\n'
    for fmt in FORMATS:
        data = load_text(tmp_path, text, format=fmt).to_dict()
        expected = {(o.stored_as or o.key).partition(".")[0] for o in OPTIONS
                    if fmt in o.stored}
        assert set(data) == expected | {"schedule_version"}, fmt


def test_an_sprt_anchor_must_be_one_of_the_two_bots(tmp_path: Path) -> None:
    text = 'format = "sprt"\n' + BASE + BOT_C + '[sprt]\ncandidate = "a"\nbaseline = "b"\n'
    assert load_text(tmp_path, text, anchor="b").anchor == "b"
    with pytest.raises(ConfigError) as err:
        load_text(tmp_path, text, anchor="c")
    assert err.value.option == "anchor" and "'a' and 'b'" in err.value.message


def test_bots_from_files_and_from_match_pass_the_same_checks() -> None:
    for bad in ("", " a", "a\tb"):
        with pytest.raises(ConfigError) as err:
            Entrant(bad, BotCommand(("x",)))
        assert err.value.option == "name"
        with pytest.raises(ConfigError) as err:
            BotEntry(bad, ("x",))
        assert err.value.option == "name"
    with pytest.raises(ConfigError) as err:
        Entrant("a", BotCommand(("x",)), ("token",))
    assert err.value.option == "tokens"
    with pytest.raises(ConfigError) as err:
        Entrant("a")
    assert err.value.option == "command"


def test_the_example_file_shows_every_key() -> None:
    text = EXAMPLE.read_text()
    for opt in OPTIONS:
        section, _, leaf = opt.key.rpartition(".")
        if section:
            assert f"[{section}]" in text, opt.key
        if opt.kind == "section":
            assert re.search(rf"^\[\[?{leaf}\]?\]", text, re.MULTILINE), opt.key
        else:
            assert re.search(rf"^(# )?{leaf} +=", text, re.MULTILINE), opt.key
    for opt in BOT_OPTIONS:
        assert re.search(rf"^(# )?{opt.key} +=", text, re.MULTILINE), f"bot.{opt.key}"


def test_log_limit_and_startup_failure_limit_reach_the_bot_and_the_runner(
        tmp_path: Path) -> None:
    from harness.tournament.runner import TournamentRunner

    config = load_text(tmp_path, """
        name = "limits"
        max_startup_failures = 0
        [[bot]]
        name = "a"
        command = "a-bot"
        log_limit = 8192
        [[bot]]
        name = "b"
        command = "b-bot"
    """)
    a, b = (bot.entrant().command for bot in config.bots)
    assert a is not None and b is not None
    assert (a.log_limit, b.log_limit) == (8192, 10 * 1024 * 1024)
    assert TournamentRunner(config).max_startup_failures == 0
    assert TournamentRunner(config, max_startup_failures=5).max_startup_failures == 5
    assert "max_startup_failures" not in config.to_dict()  # resuming is not affected
    with pytest.raises(ConfigError, match=r"bot\[0\]\.log_limit"):
        load_text(tmp_path, 'name = "x"\n[[bot]]\nname = "a"\ncommand = "a"\nlog_limit = 10\n'
                            '[[bot]]\nname = "b"\ncommand = "b"\n')


def test_remote_bots_with_the_default_seed_are_told_the_deals_are_public(
        tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "r"\n[[bot]]\nname = "here"\ncommand = "x"\n'
                    '[[bot]]\nname = "away"\ntokens = ["secret-seat"]\n')
    assert load_config(path).public_deals
    assert not load_config(path, {"seed": "918273645"}).public_deals
    assert not load_config(None).public_deals  # local bots only


def test_a_configuration_kept_by_the_referee_holds_token_hashes_that_admit_the_same_bots(
        ) -> None:
    text = ('name = "r"\n[[bot]]\nname = "a"\ntokens = ["seat-one", \'seat-two\']  '
            '# seat-two is alice\'s\n# bob plays with seat-one\n'
            '[[bot]]\nname = "b"\ncommand = "x"\n')
    kept = hash_tokens(text)
    assert "seat-one" not in kept and "seat-two" not in kept  # in comments too
    assert "# bob plays with sha256:" in kept
    registry = SlotRegistry()
    for i, token in enumerate(tomllib.loads(kept)["bot"][0]["tokens"]):
        registry.add("a", i, token, remote=True)
    assert registry.lookup("seat-two") is not None
    assert registry.lookup(hashed_token("seat-two")) is None  # the hash is no token
    with pytest.raises(ConfigError, match="plain quoted string"):
        hash_tokens('name = "r"\n[[bot]]\nname = "a"\ntokens = ["se\\u0061t"]\n')
    with pytest.raises(ConfigError, match="no other value of the file hold a token"):
        hash_tokens('name = "r"\n[[bot]]\nname = "alice"\ntokens = ["alice"]\n')


@pytest.mark.parametrize(("extra", "shared"), [
    ("", True),
    ('\n[[bot]]\nname = "stranger"\ntokens = ["tok-aaaaaaaaaaaaaaaa"]\n', False),
    ('\n[[bot]]\nname = "boxed"\ncommand = "{python} bot.py"\ncwd = "BOX"\nsandbox = true\n',
     False),
])
def test_a_tournament_with_strangers_bots_deals_each_pairing_its_own_deals(
        tmp_path: Path, extra: str, shared: bool) -> None:
    box = tmp_path / "box"
    box.mkdir()
    cfg = load_text(tmp_path, 'name = "t"\nformat = "round-robin"\ngames = 2\n'
                    '[rules]\nform = "two-handed"\n'
                    + "".join(f'[[bot]]\nname = "{n}"\ncommand = "{{python}} -m '
                              f'sample_bots.random_bot"\n' for n in "abc")
                    + extra.replace("BOX", str(box)))
    first_round = [g for g in cfg.make_format().games() if "/0000/" in g.key]
    assert len({g.group for g in first_round}) > 1
    assert (len({g.seed for g in first_round}) == 1) is shared
