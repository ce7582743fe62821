"""``euchre-harness ctl`` against a real ``serve`` process: every sub-command, the
address and token from the environment, one-line errors, and a token never shown."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from serve_support import config, ctl, serve

from harness.cli.ctl import _on_this_machine

TOKEN = "ctl-test-token-7f3a9c"


def _lines(result: subprocess.CompletedProcess[str]) -> str:
    return f"{result.stdout}{result.stderr}"


@pytest.mark.long
def test_ctl_drives_a_referee_and_never_shows_the_token(tmp_path: Path) -> None:
    out = tmp_path / "out"
    quick = tmp_path / "quick.toml"
    quick.write_text(config("quick", 1))
    long = tmp_path / "long.toml"
    long.write_text(config("long", 20))
    env = {"EUCHRE_OPERATOR_TOKEN": TOKEN}
    seen: list[str] = []
    with serve(out, env=env) as server:
        def run(*args: str, code: int = 0) -> str:
            result = ctl(server.address, *args, env=env)
            text = _lines(result)
            seen.append(text)
            assert result.returncode == code, text
            return str(result.stdout)

        assert run("bots").strip() == "no bots"
        assert "started quick" in run("start", str(quick))
        watched = run("watch", "quick")
        assert "quick: finished, 2/2 games" in watched
        assert "heuristic" in watched and "random" in watched
        listed = run("list")
        assert "quick" in listed and "finished" in listed
        status = json.loads(run("--json", "status", "quick"))
        assert status["status"] == "finished" and status["games_done"] == 2
        assert {r["name"] for r in status["standings"]} == {"heuristic", "random"}
        ended = ctl(server.address, "cancel", "quick", env=env)
        assert ended.returncode == 0 and "quick: finished" in ended.stdout
        assert "quick was not running (it is finished): nothing to cancel" in ended.stderr
        again = ctl(server.address, "resume", "quick", env=env)
        assert again.returncode == 2
        assert "failed_precondition" in again.stderr and "is finished" in again.stderr

        # long enough that it cannot finish between the commands, even on a fast machine
        assert "started long" in run("start", str(long), "--set", "games=5000")
        assert "long: cancelled" in run("cancel", "long", "--reason", "lunch")
        assert run("resume", "long").startswith(("long: pending", "long: running"))
        assert "long: cancelled" in run("cancel", "long")

        wrong = ctl(server.address, "list", env={"EUCHRE_OPERATOR_TOKEN": "wrong"})
        assert wrong.returncode == 2
        assert wrong.stdout == ""
        assert wrong.stderr.startswith(
            f"euchre-harness ctl: error: permission denied by the referee at "
            f"{server.address}: the operator token of $EUCHRE_OPERATOR_TOKEN is not the "
            f"referee's"), wrong.stderr
        assert len(wrong.stderr.strip().splitlines()) == 1
        missing = ctl(server.address, "status", "nope", env=env)
        assert missing.returncode == 2
        assert "not_found" in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
        server.stop()
    seen.append(server.stderr)
    seen += [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()
             and p.suffix in (".log", ".md", ".json", ".jsonl", ".toml")]
    assert not [text for text in seen if TOKEN in text]


def test_ctl_reports_an_unreachable_referee_in_one_line(tmp_path: Path) -> None:
    with serve(tmp_path / "out") as server:
        address = server.address
        server.stop()
    result = ctl(address, "list")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines == [f"euchre-harness ctl: error: cannot reach a referee at {address} (is "
                     f"euchre-harness serve or ladder running there? set --address or "
                     f"$EUCHRE_REFEREE_ADDRESS; a referee that serves TLS needs --tls-ca "
                     f"or $EUCHRE_TLS_CA)"]


def test_ctl_status_shows_the_anchor_at_its_rating_and_a_sweep_above_it(
        tmp_path: Path) -> None:
    """The anchor (here the bot named random, which forfeits every game by playing
    illegally) lost every game: ctl shows its fixed rating, marked, and heuristic's
    bound at or above it, as the reports written beside the store do."""
    path = tmp_path / "big.toml"
    path.write_text(config("big", 1, random_command='"{python} -m sample_bots.faulty_bot '
                                                    '--mode illegal"'))
    with serve(tmp_path / "out") as server:
        assert ctl(server.address, "start", str(path), "--set", "anchor=random",
                   "--set", "fault_policy=forfeit").returncode == 0
        watched = ctl(server.address, "watch", "big")
        assert "big: finished" in watched.stdout, _lines(watched)
        status = ctl(server.address, "status", "big")
    assert status.returncode == 0, _lines(status)
    rows = {line.split()[1]: line for line in status.stdout.splitlines()[2:]}
    assert "+0 (anchor)" in rows["random"] and "all games" not in rows["random"]
    bound = int(rows["heuristic"].split("all games won: above ")[1].split()[0])
    assert bound >= 0
    report = (tmp_path / "out" / "big" / "report.md").read_text()
    assert f"all games won: above {bound:+d}" in report and "+0 (anchor)" in report


def test_ctl_says_so_before_it_sends_a_token_off_this_machine_without_tls(
        tmp_path: Path) -> None:
    # The token would cross the network in clear, for anyone on the way to read. The
    # address is one no machine has (TEST-NET-1): the call fails after the note.
    far = ctl("192.0.2.1:50051", "--timeout", "1", "list",
              env={"EUCHRE_OPERATOR_TOKEN": TOKEN})
    assert far.returncode == 2
    assert far.stderr.startswith("note: sending a token to 192.0.2.1:50051 without TLS")
    assert TOKEN not in far.stdout + far.stderr
    # The same for a bot's own token, given in the environment or as --bot-token.
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    (folder / "bot.py").write_text("")
    for env, flag in (({"EUCHRE_BOT_TOKEN": TOKEN}, ()), ({}, ("--bot-token", TOKEN))):
        sent = ctl("192.0.2.1:50051", "--timeout", "1", "submit", "mine", str(folder),
                   *flag, env=env)
        assert sent.returncode == 2
        assert sent.stderr.startswith("note: sending a token to 192.0.2.1:50051 without "
                                      "TLS"), sent.stderr
        assert TOKEN not in sent.stdout + sent.stderr
    for here in ("127.0.0.1:50051", "localhost:50051", "[::1]:50051", "unix:/tmp/x.sock"):
        assert _on_this_machine(here), here
    for there in ("192.0.2.1:50051", "example.org:443", "dns:///example.org:443",
                  "[2001:db8::1]:1"):
        assert not _on_this_machine(there), there
