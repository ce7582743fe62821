"""The command line as a user meets it: its ``main()`` (tests/cli_support.py) and, where
the process is the subject, real ``python -m harness`` processes; real gRPC throughout.

Flags override the file only when given; errors are one clean line; every flag says what
it does; SPRT reruns and anchors are refused up front with the fix named; the referee's
address can be written to a file for scripts.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import harness_command
from configs import RANDOM, bot, toml_config
from serve_support import Started, end, wait_for_address
from waiting import WAIT_S

from harness.cli import build_parser
from harness.cli._tournament import load
from harness.cli.common import operator_token
from harness.cli.match import parse_bot
from harness.errors import HarnessError
from harness.protocol.tls import ServerTLS
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return harness_command(*args, cwd=cwd)


def bots_file(tmp_path: Path, extra: str = "", *, third: bool = False) -> Path:
    """Two-handed games to 3 points between the sample bots (and a second random bot)."""
    path = tmp_path / "t.toml"
    more = (bot("random2", RANDOM),) if third else ()
    path.write_text(toml_config("small", output=tmp_path / "out", concurrency=2, tc="2+10",
                                extra=extra, rules={"form": "two-handed", "target": 3},
                                bots=(bot("random"), bot("heuristic"), *more)))
    return path


def stored_config(tmp_path: Path, tournament: str) -> dict[str, object]:
    with ResultsStore(store_path(tmp_path / "out")) as store:
        return store.tournament_config(tournament)


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


# --------------------------------------------------------------------------- flags


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_sprt_flags_left_out_keep_the_files_sprt_table(tmp_path: Path) -> None:
    path = bots_file(tmp_path, '[sprt]\ncandidate = "heuristic"\nbaseline = "random"\n'
                               'elo0 = -5.0\nelo1 = 40.0\nalpha = 0.1\nbeta = 0.2\n'
                               'max_pairs = 7\n')
    from harness.cli.sprt import _as_sprt

    config = load(_parse("sprt", str(path)), _as_sprt)
    assert config.sprt is not None
    assert (config.sprt.elo0, config.sprt.elo1, config.sprt.alpha, config.sprt.beta,
            config.sprt.max_pairs) == (-5.0, 40.0, 0.1, 0.2, 7)
    given = load(_parse("sprt", str(path), "--elo1", "60", "--max-pairs", "9"), _as_sprt)
    assert given.sprt is not None
    assert (given.sprt.elo0, given.sprt.elo1, given.sprt.max_pairs) == (-5.0, 60.0, 9)


def test_run_flags_left_out_keep_the_files_values(tmp_path: Path) -> None:
    path = bots_file(tmp_path, "games = 3\nseed = 9\n")
    args = _parse("run", str(path))
    assert args.opt_games is None and args.opt_tc is None  # "not given"
    config = load(args)
    assert (config.games, config.seed, config.concurrency, str(config.time_control)) == \
        (3, 9, 2, "2+10")
    flagged = load(_parse("run", str(path), "--games", "5", "--set", "games=4", "--tc", "3"))
    assert flagged.games == 5 and str(flagged.time_control) == "3+0"


def test_sprt_from_a_file_keeps_its_bounds_end_to_end(tmp_path: Path) -> None:
    path = bots_file(tmp_path, '[sprt]\ncandidate = "heuristic"\nbaseline = "random"\n'
                               'elo0 = 0.0\nelo1 = 300.0\nmax_pairs = 2\n')
    result = cli("sprt", str(path), "--quiet")
    assert result.returncode == 0, result.stderr
    stored = stored_config(tmp_path, "sprt-heuristic-vs-random")
    assert stored["sprt"] == {"candidate": "heuristic", "baseline": "random", "elo0": 0.0,
                              "elo1": 300.0, "alpha": 0.05, "beta": 0.05, "max_pairs": 2}
    with ResultsStore(store_path(tmp_path / "out")) as store:
        assert len(list(store.games("sprt-heuristic-vs-random"))) <= 4


def test_sprt_without_a_candidate_names_the_flags(tmp_path: Path) -> None:
    result = cli("sprt", str(bots_file(tmp_path)), "--quiet")
    assert result.returncode == 2
    assert error_lines(result) == [
        "euchre-harness: error: sprt needs a candidate and a baseline: give --candidate "
        "and --baseline, or an [sprt] table in the file"]


def test_every_command_and_flag_has_a_help_text() -> None:
    parser = build_parser()
    assert parser.description and "``" not in parser.description
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subs.choices) >= {"run", "match", "sprt", "ratings", "replay", "serve"}
    _check_help(subs, "euchre-harness")


def _check_help(subs: argparse._SubParsersAction[argparse.ArgumentParser], path: str) -> None:
    """Every (nested) command has a description and every flag a help text."""
    for name, sub in subs.choices.items():
        assert sub.description, f"{path} {name}"
        for action in sub._actions:
            assert action.help and action.help != argparse.SUPPRESS, \
                (f"{path} {name}", action.option_strings or action.dest)
            if isinstance(action, argparse._SubParsersAction):
                _check_help(action, f"{path} {name}")


def test_console_script_and_python_m_harness_both_run() -> None:
    help_text = subprocess.run([sys.executable, "-m", "harness", "--help"], cwd=ROOT,
                               text=True, capture_output=True, timeout=60)
    assert help_text.returncode == 0 and "COMMAND" in help_text.stdout
    script = Path(sys.executable).parent / "euchre-harness"
    if script.exists():
        result = subprocess.run([str(script), "ratings", "--help"], text=True,
                                capture_output=True, timeout=60)
        assert result.returncode == 0 and "results store" in result.stdout


# --------------------------------------------------------------------------- clean errors


def test_match_with_zero_games_is_one_line() -> None:
    result = cli("match", "--games", "0", "--bot", "a={python} -m sample_bots.random_bot")
    assert result.returncode == 2
    assert error_lines(result) == [
        "euchre-harness: error: --games: must be at least 1; got 0"]
    run = cli("run", "--games", "0")
    assert run.returncode == 2 and len(error_lines(run)) == 1


@pytest.fixture
def busy_port() -> object:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("command", ["serve", "match", "run"])
def test_a_port_in_use_is_one_clean_line(command: str, busy_port: int,
                                         tmp_path: Path) -> None:
    extra = {"serve": ["--log-dir", str(tmp_path / "logs"), "--output", str(tmp_path)],
             "match": ["--bot", "a={python} -m sample_bots.random_bot", "--form",
                       "two-handed", "--bot", "b={python} -m sample_bots.random_bot",
                       "--log-dir", str(tmp_path / "logs"),
                       "--store", str(tmp_path / "matches.sqlite")],
             "run": ["--output", str(tmp_path / "out"), "--quiet"]}[command]
    result = cli(command, "--port", str(busy_port), *extra)
    assert result.returncode == 2
    lines = [ln for ln in error_lines(result) if not ln.startswith(("note:", "tournament "))]
    assert lines == [f"euchre-harness: error: cannot listen on 127.0.0.1:{busy_port}: "
                     f"the port is in use"], result.stderr
    assert "add_port" not in result.stderr


@pytest.mark.parametrize(("command", "flag"), [("run", "--output"), ("match", "--log-dir"),
                                             ("serve", "--log-dir"), ("serve", "--output")])
def test_a_folder_that_cannot_be_written_is_one_clean_line(command: str, flag: str,
                                                            tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    extra = {"run": ["--quiet", "--games", "1"], "serve": ["--port", "0"],
             "match": ["--bot", "a={python} -m sample_bots.random_bot", "--form", "two-handed",
                       "--bot", "b={python} -m sample_bots.random_bot",
                       "--store", str(tmp_path / "matches.sqlite")]}[command]
    if (command, flag) == ("serve", "--output"):
        extra += ["--log-dir", str(tmp_path / "logs")]
    result = cli(command, flag, str(blocker / "out"), *extra)
    assert result.returncode == 2
    lines = [ln for ln in error_lines(result) if not ln.startswith(("tournament ", "note:"))]
    assert len(lines) == 1, result.stderr
    option = "output" if command == "run" else flag
    assert lines[0].startswith(f"euchre-harness: error: {option}: cannot write to the folder "
                               f"{blocker / 'out'}: ")
    assert "[Errno" not in result.stderr and "Traceback" not in result.stderr


# --------------------------------------------------------------------------- SPRT


def test_sprt_with_an_anchor_outside_the_pair_is_refused_before_any_game(
        tmp_path: Path) -> None:
    path = bots_file(tmp_path, 'anchor = "random2"\n', third=True)
    result = cli("sprt", str(path), "--candidate", "heuristic", "--baseline", "random",
                 "--quiet")
    assert result.returncode == 2
    (line,) = error_lines(result)
    assert line.startswith("euchre-harness: error: anchor: ") and "'random2'" in line
    assert "--anchor" not in line
    assert not store_path(tmp_path / "out").exists()


def test_sprt_rerun_with_other_bounds_names_id_and_fresh(tmp_path: Path) -> None:
    path = bots_file(tmp_path)
    pair = ("--candidate", "heuristic", "--baseline", "random", "--quiet", "--elo0", "0")
    first = cli("sprt", str(path), *pair, "--elo1", "300", "--max-pairs", "1")
    assert first.returncode == 0, first.stderr
    again = cli("sprt", str(path), *pair, "--elo1", "200", "--max-pairs", "1")
    assert again.returncode == 2
    (line,) = error_lines(again)
    assert "differs in: sprt" in line and "--id" in line and "--fresh" in line
    beside = cli("sprt", str(path), *pair, "--elo1", "200", "--max-pairs", "1",
                 "--id", "second-try")
    assert beside.returncode == 0, beside.stderr
    assert stored_config(tmp_path, "second-try")["sprt"]["elo1"] == 200.0  # type: ignore[index]
    assert stored_config(tmp_path, "sprt-heuristic-vs-random")["sprt"]["elo1"] == 300.0  # type: ignore[index]
    fresh = cli("sprt", str(path), *pair, "--elo1", "200", "--max-pairs", "1", "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert "--fresh: deleted tournament 'sprt-heuristic-vs-random'" in fresh.stderr
    assert stored_config(tmp_path, "sprt-heuristic-vs-random")["sprt"]["elo1"] == 200.0  # type: ignore[index]


# --------------------------------------------------------------------------- remote bots


def test_address_file_lets_a_script_start_the_remote_bots(tmp_path: Path) -> None:
    path = bots_file(tmp_path, "games = 1\n")
    text = path.read_text().replace(
        'command = "{python} -m sample_bots.heuristic_bot"', 'tokens = ["far-1"]')
    path.write_text(text)
    address_file = tmp_path / "referee.json"
    run = Started([sys.executable, "-m", "harness", "run", str(path), "--quiet",
                   "--address-file", str(address_file)], tmp_path, "run", own_stdout=True)
    bot = None
    try:
        address = wait_for_address(run.proc, log=run.log, address_file=address_file)
        info = json.loads(address_file.read_text())
        assert address == f"{info['host']}:{info['port']}"
        assert info["host"] == "127.0.0.1" and info["port"] > 0
        bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot"], cwd=ROOT,
                               env={**os.environ, "EUCHRE_REFEREE_ADDRESS": address,
                                    "EUCHRE_BOT_TOKEN": "far-1"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert run.proc.wait(WAIT_S) == 0, run.stderr
        assert "random" in run.stdout  # the report
        assert f"referee on {address}" in run.stderr
    finally:
        end([run, bot])


# --------------------------------------------------------------------------- replay


def test_an_ambiguous_replay_lists_the_full_references_and_they_work(tmp_path: Path) -> None:
    path = bots_file(tmp_path, "games = 1\nduplicate = false\n")
    for tournament in ("first", "second"):
        result = cli("run", str(path), "--quiet", "--id", tournament)
        assert result.returncode == 0, result.stderr
    db = str(store_path(tmp_path / "out"))
    ambiguous = cli("replay", "rr/0000/000", "--store", db)
    assert ambiguous.returncode == 2
    (line,) = error_lines(ambiguous)
    assert "first/rr/0000/000" in line and "second/rr/0000/000" in line
    for reference in ("first/rr/0000/000", "second/rr/0000/000"):
        replay = cli("replay", reference, "--store", db)
        assert replay.returncode == 0, replay.stderr


def test_a_referee_without_an_operator_token_or_tls_or_with_the_token_in_a_flag_says_so(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EUCHRE_OPERATOR_TOKEN", raising=False)
    args = argparse.Namespace(host="0.0.0.0", operator_token=None)
    assert operator_token(args, None) is None
    err = capsys.readouterr().err
    assert "no operator token" in err and "without TLS" in err
    assert "and no one else" in err  # operator calls from elsewhere are refused
    # A flag is in the process list, where every user of the machine reads it.
    args = argparse.Namespace(host="0.0.0.0", operator_token="s3cret")
    assert operator_token(args, ServerTLS(b"chain", b"key")) == "s3cret"
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("note: --operator-token shows the token to every user")
    monkeypatch.setenv("EUCHRE_OPERATOR_TOKEN", "s3cret")
    args = argparse.Namespace(host="0.0.0.0", operator_token=None)
    assert operator_token(args, ServerTLS(b"chain", b"key")) == "s3cret"
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("note: EUCHRE_OPERATOR_TOKEN is set")
    # Without a token, every user and process of this machine is an operator.
    monkeypatch.delenv("EUCHRE_OPERATOR_TOKEN")
    assert operator_token(argparse.Namespace(host="127.0.0.1", operator_token=None),
                          None) is None
    (line,) = capsys.readouterr().err.splitlines()
    assert "every user and process of this machine may make operator calls" in line


def test_a_remote_bots_token_can_come_from_the_environment_instead_of_the_command_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A command line is shown to every user of the machine (ps); the environment is not.
    monkeypatch.setenv("SEAT_A", "tok-from-the-environment")
    entrant = parse_bot("away@remote=env:SEAT_A,tok-written")
    assert (entrant.name, entrant.tokens) == ("away", ("tok-from-the-environment",
                                                       "tok-written"))
    monkeypatch.delenv("SEAT_A")
    with pytest.raises(HarnessError, match="environment variable 'SEAT_A'"):
        parse_bot("away@remote=env:SEAT_A")
