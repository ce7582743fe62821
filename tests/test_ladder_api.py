"""The ladder's operator API over real gRPC, with a real ``euchre-harness ladder``
process and ``euchre-harness ctl``: a bot registered with ``ctl register`` plays the
house bots with the token it printed, is rated in ``ctl standings``, its games and the
ladder's are listed newest first, a watch sees the ladder's events, a wrong operator
token is refused, and the bot's token appears nowhere but in the registration's own
output."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import harness_command
from configs import HOUSE_PACE_MS
from serve_support import REPO, Ladder, end, random_bots
from waiting import PROCESS_POLL_S

from harness.storage.results import ResultsStore

OPERATOR_TOKEN = "operator-secret-for-this-test"


class ApiLadder(Ladder):
    """A ladder process and a ``ctl`` pointed at it, keeping every output ``ctl`` gave."""

    def __init__(self, tmp_path: Path, *extra: str,
                 operator_token: str = OPERATOR_TOKEN) -> None:
        self.outputs: list[str] = []
        super().__init__(tmp_path, *extra, name="api-ladder", pace_ms=HOUSE_PACE_MS,
                         env={"EUCHRE_OPERATOR_TOKEN": operator_token})

    def ctl(self, *args: str, token: str = OPERATOR_TOKEN) -> subprocess.CompletedProcess[str]:
        done = harness_command("ctl", "--address", self.address, *args, cwd=REPO,
                               env={**self.env, "EUCHRE_OPERATOR_TOKEN": token})
        self.outputs += [done.stdout, done.stderr]
        return done

    def standings(self) -> dict[str, Any]:
        done = self.ctl("--json", "standings")
        if done.returncode != 0:
            return {}
        return {row["name"]: row for row in json.loads(done.stdout)["standings"]}


@pytest.mark.long
def test_registered_bot_plays_is_rated_and_watched_over_the_operator_api(
        tmp_path: Path) -> None:
    ladder = ApiLadder(tmp_path)
    bots: list[subprocess.Popen[bytes]] = []
    watch = None
    watch_out = tmp_path / "watch.out"
    try:
        ladder.wait_for(lambda: "random" in ladder.standings(), "the house bots' standings",
                        interval=PROCESS_POLL_S)
        with watch_out.open("w") as out:
            watch = subprocess.Popen(
                [sys.executable, "-m", "harness", "ctl", "--address", ladder.address,
                 "watch"], cwd=REPO, env=ladder.env, stdout=out,
                stderr=subprocess.STDOUT)
        # The watch is subscribed once it shows the house bots' games.
        ladder.wait_for(lambda: "game finished:" in watch_out.read_text(), "the watch")
        registered = ladder.ctl("register", "visitor", "--owner", "ann")
        assert registered.returncode == 0, registered.stderr
        name, token = registered.stdout.split()
        assert name == "visitor:" and len(token) >= 32
        ladder.outputs.remove(registered.stdout)  # the one place the token may be shown
        assert "shown only once" in registered.stderr
        plain = ladder.ctl("register", "mybot")  # the owner defaults to the user's name
        assert plain.returncode == 0 and plain.stdout.startswith("mybot: "), plain.stderr
        ladder.outputs.remove(plain.stdout)

        bots = random_bots(ladder.address, token)
        ladder.wait_for(lambda: ladder.standings().get("visitor", {}).get("games", 0) > 0,
                        "the visitor's first game", interval=PROCESS_POLL_S)
        row = ladder.standings()["visitor"]
        assert row["rated"] and row["owner"] == "ann"

        table = ladder.ctl("standings")
        assert table.returncode == 0 and "visitor" in table.stdout
        games = ladder.ctl("--json", "games", "visitor")
        assert games.returncode == 0, games.stderr
        listed = json.loads(games.stdout)["games"]
        assert listed and all("visitor" in g["seats"] for g in listed)
        ladder.wait_for(
            lambda: len(json.loads(ladder.ctl("--json", "games").stdout)["games"]) >= 3,
            "three games listed", interval=PROCESS_POLL_S)
        latest = json.loads(ladder.ctl("--json", "games", "--limit", "3").stdout)["games"]

        refused = ladder.ctl("standings", token="not-the-operator-token")
        assert refused.returncode == 2
        assert "permission denied" in refused.stderr and refused.stdout == ""
        wrong_register = ladder.ctl("register", "intruder", "--owner", "eve",
                                    token="not-the-operator-token")
        assert wrong_register.returncode == 2 and "intruder" not in ladder.standings()

        unknown = ladder.ctl("retire", "nobody")
        assert unknown.returncode == 2 and "not_found" in unknown.stderr
        assert len(unknown.stderr.strip().splitlines()) == 1
        lifted = ladder.ctl("lift", "visitor")
        assert lifted.returncode == 0 and "not benched" in lifted.stdout

        ladder.wait_for(lambda: "bot connected: visitor" in watch_out.read_text(),
                        "the watch to see the visitor")
    finally:
        end([*bots, watch])
        ladder.stop(signal.SIGINT)

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
