"""The ladder's operator API over real gRPC, with a real ``euchre-harness ladder``
process and ``euchre-harness ctl``: a bot registered with ``ctl register`` plays the
house bots with the token it printed, is rated in ``ctl standings``, its games and the
ladder's are listed newest first, a watch sees the ladder's events, a wrong operator
token is refused, and the bot's token appears nowhere but in the registration's own
output."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.store import ResultsStore

REPO = Path(__file__).resolve().parent.parent
OPERATOR_TOKEN = "operator-secret-for-this-test"
CONFIG = """name = "api-ladder"
output = "{output}"
concurrency = 2
tc = "5+30"
[rules]
target = 3
[[bot]]
name = "random"
command = "{{python}} -m sample_bots.random_bot"
[[bot]]
name = "heuristic"
command = "{{python}} -m sample_bots.heuristic_bot"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Callable[[], bool], timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "timed out waiting for the ladder"
        time.sleep(0.3)


class Ladder:
    """A ladder process and a ``ctl`` pointed at it."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        config = tmp_path / "ladder.toml"
        config.write_text(CONFIG.format(output=tmp_path / "out"))
        self.address = f"127.0.0.1:{_free_port()}"
        self.env = {**os.environ, "PYTHONPATH": str(REPO),
                    "EUCHRE_OPERATOR_TOKEN": OPERATOR_TOKEN}
        self.outputs: list[str] = []
        self.stderr = tmp_path / "ladder.err"
        with self.stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "harness", "-v", "ladder", str(config), "--port",
                 self.address.rsplit(":", 1)[1]],
                cwd=REPO, env=self.env, stdout=err, stderr=subprocess.STDOUT)

    def ctl(self, *args: str, token: str = OPERATOR_TOKEN) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "ctl", "--address", self.address, *args],
            cwd=REPO, env={**self.env, "EUCHRE_OPERATOR_TOKEN": token},
            capture_output=True, text=True, timeout=60)
        self.outputs += [done.stdout, done.stderr]
        return done

    def standings(self) -> dict[str, Any]:
        done = self.ctl("--json", "standings")
        if done.returncode != 0:
            return {}
        return {row["name"]: row for row in json.loads(done.stdout)["standings"]}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


def test_registered_bot_plays_is_rated_and_watched_over_the_operator_api(
        tmp_path: Path) -> None:
    ladder = Ladder(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    watch = None
    watch_out = tmp_path / "watch.out"
    try:
        _wait(lambda: "random" in ladder.standings())
        with watch_out.open("w") as out:
            watch = subprocess.Popen(
                [sys.executable, "-m", "harness", "ctl", "--address", ladder.address,
                 "watch"], cwd=REPO, env=ladder.env, stdout=out,
                stderr=subprocess.STDOUT)
        # The watch is subscribed once it shows the house bots' games.
        _wait(lambda: "game finished:" in watch_out.read_text())
        registered = ladder.ctl("register", "visitor", "--owner", "ann")
        assert registered.returncode == 0, registered.stderr
        name, token = registered.stdout.split()
        assert name == "visitor:" and len(token) >= 32
        ladder.outputs.remove(registered.stdout)  # the one place the token may be shown
        assert "shown only once" in registered.stderr
        plain = ladder.ctl("register", "mybot")  # the owner defaults to the user's name
        assert plain.returncode == 0 and plain.stdout.startswith("mybot: "), plain.stderr
        ladder.outputs.remove(plain.stdout)

        bots = [subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot",
                                  "--address", ladder.address, "--token", token],
                                 cwd=REPO, env=ladder.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for _ in range(2)]
        _wait(lambda: ladder.standings().get("visitor", {}).get("games", 0) > 0)
        row = ladder.standings()["visitor"]
        assert row["rated"] and row["owner"] == "ann"

        table = ladder.ctl("standings")
        assert table.returncode == 0 and "visitor" in table.stdout
        games = ladder.ctl("--json", "games", "visitor")
        assert games.returncode == 0, games.stderr
        listed = json.loads(games.stdout)["games"]
        assert listed and all("visitor" in g["seats"] for g in listed)
        _wait(lambda: len(json.loads(ladder.ctl("--json", "games").stdout)["games"]) >= 3)
        latest = json.loads(ladder.ctl("--json", "games", "--limit", "3").stdout)["games"]

        refused = ladder.ctl("standings", token="not-the-operator-token")
        assert refused.returncode == 2
        assert "permission_denied" in refused.stderr and refused.stdout == ""
        wrong_register = ladder.ctl("register", "intruder", "--owner", "eve",
                                    token="not-the-operator-token")
        assert wrong_register.returncode == 2 and "intruder" not in ladder.standings()

        unknown = ladder.ctl("retire", "nobody")
        assert unknown.returncode == 2 and "not_found" in unknown.stderr
        assert len(unknown.stderr.strip().splitlines()) == 1
        lifted = ladder.ctl("lift", "visitor")
        assert lifted.returncode == 0 and "not benched" in lifted.stdout

        _wait(lambda: "bot connected: visitor" in watch_out.read_text())
    finally:
        for proc in (*bots, watch):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(30)
        ladder.stop()

    assert ladder.proc.returncode == 0
    # ListGames gave the newest games at the time of the call, newest first: consecutive
    # in the stored order, of every bot or of the one asked for.
    with ResultsStore(tmp_path / "out" / "ladder.sqlite") as results:
        (ladder_id,) = results.tournament_ids()
        stored = [g.game_key for g in results.games(ladder_id)]
        of_visitor = [g.game_key for g in results.games(ladder_id) if "visitor" in g.seats]
    for got, order, limit in ((latest, stored, 3), (listed, of_visitor, 20)):
        where = [order.index(g["game_key"]) for g in got]
        assert len(got) == min(limit, where[0] + 1)
        assert where == list(range(where[0], where[0] - len(got), -1)), where
    watched = watch_out.read_text()
    assert "rating changed:" in watched
    # The bot's token is shown only by its registration: in no log, store file or output.
    secret = token.encode()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "ladder.sqlite" for p in files)
    assert not [p for p in files if secret in p.read_bytes()]
    assert not [o for o in ladder.outputs if token in o]
