"""Start-up errors that explain themselves: the quote of a bot's log (the end of this
attempt, the line that names the error), a bot that never dials in explained at its
first game of a run, an unquoted ``--bot`` command, configuration typos, a port in use
for ``ladder``, and settings taken from the environment."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import harness_command
from configs import bot, toml_config
from serve_support import serve

from harness.errors import StartupFailuresError, UnknownKeysError
from harness.referee.botlog import START_MARK, last_attempt, last_words
from harness.tournament.config import load_config
from harness.tournament.runner import TournamentRunner

ROOT = Path(__file__).resolve().parent.parent

NODE_TRACE = """\
node:internal/modules/cjs/loader:1080
  throw err;
  ^

Error: Cannot find module '@grpc/grpc-js'
Require stack:
- /home/me/bot.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15)
    at Module._load (node:internal/modules/cjs/loader:922:27) {
  code: 'MODULE_NOT_FOUND',
  requireStack: [ '/home/me/bot.js' ]
}

Node.js v18.19.0
"""

PY_TRACE = """\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/home/me/bot.py", line 3, in <module>
    import grpc
ModuleNotFoundError: No module named 'grpc'
"""


def cli(*args: str, cwd: Path,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return harness_command(*args, cwd=cwd, env=env)


@pytest.mark.parametrize(("output", "words"), [
    (NODE_TRACE, "Error: Cannot find module '@grpc/grpc-js'"),
    (PY_TRACE, "ModuleNotFoundError: No module named 'grpc'"),
    ("starting\nconnecting to 127.0.0.1:1\nno referee there, giving up\n",
     "starting | connecting to 127.0.0.1:1 | no referee there, giving up"),
    ("", ""),
])
def test_the_quoted_words_name_the_error(output: str, words: str) -> None:
    assert last_words(output) == words


def test_the_latest_attempt_is_read_from_a_log_appended_across_runs(tmp_path: Path) -> None:
    log = tmp_path / "bot-0.log"
    log.write_text(f"{START_MARK}old\n{PY_TRACE}{START_MARK}new\n{NODE_TRACE}")
    assert last_attempt(log) == NODE_TRACE
    assert last_attempt(tmp_path / "missing.log") == ""


JUNK_BOT = """\
import time
print("Hello? this bot prints and never dials the referee", flush=True)
time.sleep(600)
"""


@pytest.mark.waits
def test_a_bot_that_never_dials_in_is_explained_at_its_first_game(tmp_path: Path) -> None:
    """A run: the first game of a bot that prints junk and never says Hello is explained
    when it ends (its start-up timeout, 10 s here: time enough for the other bot on a busy
    machine), with the end of its log; the run stops after the configured streak."""
    (tmp_path / "junk.py").write_text(JUNK_BOT)
    (tmp_path / "t.toml").write_text(toml_config(
        "junk", games=2, concurrency=1, max_startup_failures=2, output=tmp_path / "out",
        bots=(bot("random"), bot("junk", f"{{python}} {tmp_path / 'junk.py'}"))))
    notices: list[str] = []
    runner = TournamentRunner(load_config(tmp_path / "t.toml"), startup_timeout=10.0,
                              on_notice=notices.append)
    with pytest.raises(StartupFailuresError) as stopped:
        asyncio.run(runner.run())
    log = tmp_path / "out" / "logs" / "junk" / "junk-0.log"
    said = (f"no handshake within 10s; its log {log} ends: "
            f"Hello? this bot prints and never dials the referee")
    assert notices == [f"bot 'junk' did not start (it forfeits the game; the run stops if it "
                       f"fails 2 times in a row): {said}"]
    assert str(stopped.value) == (f"bot 'junk' failed to start 2 times in a row, so the run "
                                  f"stops (its forfeits are not stored): {said}")


def test_an_unquoted_bot_command_gets_a_hint_to_quote_it(tmp_path: Path) -> None:
    done = cli("match", "--bot", "a=python", "-m", "sample_bots.random_bot",
               "--bot", "b=x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "euchre-harness: error: unrecognized arguments: -m sample_bots.random_bot (a command "
        "line with spaces is one argument: quote it, --bot 'a=python -m "
        "sample_bots.random_bot')")
    assert not (tmp_path / "results").exists()


def test_every_unknown_key_of_a_file_is_named_at_once_with_the_closest_one(
        tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\ngmes = 2\nconcurency = 2\nzzz = 1\n'
                    '[rules]\nstick_the_deler = true\n'
                    '[[bot]]\nname = "a"\ncomand = "x"\n[[bot]]\nname = "b"\ncommand = "y"\n')
    with pytest.raises(UnknownKeysError) as err:
        load_config(path)
    assert err.value.keys == ["gmes", "concurency", "zzz", "rules.stick_the_deler",
                              "bot[0].comand"]
    text = str(err.value)
    for typo, meant in (("gmes", "games"), ("concurency", "concurrency"),
                        ("rules.stick_the_deler", "rules.stick_the_dealer"),
                        ("bot[0].comand", "bot[0].command")):
        assert f"{typo}: unknown key (did you mean {meant}?)" in text
    assert "zzz: unknown key (keys here: name, id, output" in text
    done = cli("run", str(path), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("unknown key") == 5, done.stderr


def test_a_rule_typo_lists_the_rule_options_only(tmp_path: Path) -> None:
    done = cli("match", "--bot", "a=x", "--rule", "stick_the_deler=true", "--rule", "qq=1",
               cwd=tmp_path)
    assert done.returncode == 2
    line = done.stderr.strip()
    assert line.startswith("euchre-harness: error: stick_the_deler: unknown rule option "
                           "(did you mean stick_the_dealer?); qq: unknown rule option (rule "
                           "options here: form, deck, target,"), line
    assert "games" not in line and "ladder" not in line and "sprt" not in line


def test_a_set_typo_suggests_the_key(tmp_path: Path) -> None:
    done = cli("run", "--set", "rules.stick_the_deler=true", cwd=tmp_path)
    assert done.stderr.strip() == ("euchre-harness: error: rules.stick_the_deler: unknown "
                                   "key (did you mean rules.stick_the_dealer?)")


def test_a_ladder_on_a_port_in_use_says_so_in_one_line_and_creates_nothing(
        tmp_path: Path) -> None:
    (tmp_path / "ladder.toml").write_text('name = "l"\noutput = "lad"\n')
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("ladder", "ladder.toml", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"euchre-harness: error: cannot listen on 127.0.0.1:{port}: "
                                   f"the port is in use")
    assert not (tmp_path / "lad").exists()


def test_serve_announces_a_token_from_the_environment_and_ctl_names_the_variable(
        tmp_path: Path) -> None:
    token = "env-token-for-this-test-91c2"
    with serve(tmp_path / "out", env={"EUCHRE_OPERATOR_TOKEN": token}) as server:
        assert ("note: EUCHRE_OPERATOR_TOKEN is set: operator calls (euchre-harness ctl) "
                "must present that token, from this machine too") in server.stderr
        assert token not in server.stderr
        env = {k: v for k, v in os.environ.items() if k != "EUCHRE_OPERATOR_TOKEN"}
        done = subprocess.run([sys.executable, "-m", "harness", "ctl", "--address",
                               server.address, "list"], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 2
        assert done.stderr.strip() == (
            f"euchre-harness ctl: error: permission denied by the referee at "
            f"{server.address}: no operator token was sent (set --operator-token or "
            f"$EUCHRE_OPERATOR_TOKEN); without a token of its own, a referee accepts "
            f"operator calls from its own machine only")
