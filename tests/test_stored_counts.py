"""Every count a person sees equals what is stored. A real ``serve`` runs a tournament
in which one bot can never start and ``max_startup_failures = 0`` (its forfeits are held
back from the store while its streak lasts): the live page's ``/api/t/ID``, the
GetTournament call under ``ctl status``, ``ctl status`` itself after a cancel and
``summary.json`` all count exactly the games the store holds."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import grpc
from configs import Raw, bot, toml_config
from serve_support import ctl, serve, stub
from waiting import WAIT_S, wait_for

from harness.protocol import operator as op
from harness.storage.results import ResultsStore

CONFIG = toml_config(
    "held", games=30, concurrency=1, tc="5+10", max_startup_failures=0,
    rules={"form": "two-handed", "target": 2},
    bots=(bot("random"), bot("heuristic"),
          bot("broken", Raw('["{python}", "-c", "raise SystemExit(1)"]'))))


def _stored(folder: Path) -> int:
    path = folder / "results.sqlite"
    if not path.exists():
        return 0
    with ResultsStore(path) as store:
        return sum(1 for _ in store.games("held"))


def _api(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=WAIT_S) as r:
        return json.loads(r.read().decode())


def _starts(folder: Path) -> int:
    """How many times the broken bot was started (each start is logged)."""
    return sum(p.read_text(errors="replace").count("--- start:")
               for p in folder.rglob("broken-*.log"))


def _between(seen: int, before: int, after: int) -> None:
    """``seen`` was read between two reads of the store: it is a count the store held."""
    assert before <= seen <= after, (before, seen, after)


def test_the_live_page_and_ctl_count_only_stored_games(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve(out, "--http-port", "0") as server, \
            grpc.insecure_channel(server.address) as channel:
        url = server.said("live page on ").rstrip("/")
        ops = stub(channel)
        ops.StartTournament(op.StartTournamentRequest(config_toml=CONFIG))
        folder = out / "held"
        # Several games forfeited by the bot that cannot start: none of them is stored
        # yet, and games between the other two are.
        server.wait_for(lambda: _starts(folder) >= 4 and _stored(folder) >= 2,
                        "forfeits held back and games stored")
        for _ in range(3):
            before = _stored(folder)
            page = _api(f"{url}/api/t/held")
            status = ops.GetTournament(op.GetTournamentRequest(tournament_id="held"))
            after = _stored(folder)
            assert page["status"] == "running", page
            _between(page["games_done"], before, after)
            _between(status.tournament.games_done, before, after)

        ops.CancelTournament(op.CancelTournamentRequest(tournament_id="held"))
        wait_for(lambda: (folder / "summary.json").exists(), "summary.json")
        stored = _stored(folder)
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["games"]["total"] == stored
        line = ctl(server.address, "status", "held")
        assert line.returncode == 0, line.stderr
        shown = re.search(r"held: cancelled, (\d+)/(\d+) games", line.stdout)
        assert shown is not None, line.stdout
        assert int(shown.group(1)) == stored
        assert _api(f"{url}/api/t/held")["games_done"] == stored
        # The forfeits of the bot that never started were held back, never counted.
        with ResultsStore(folder / "results.sqlite") as store:
            assert all("broken" not in row.seats for row in store.games("held"))
