"""Hosted bots on a running ``serve``: the Python sample bot submitted with ``ctl submit``
over real gRPC, built in a box, named by a tournament started with ``ctl start`` (``[[bot]]
hosted = "NAME@N"``) and played in a box, its games stored without a fault; a version
whose build failed is refused by ``ctl start`` with the reason; a build cut by kill -9
runs again after a restart; a bundle over the cap, or a second upload of a bot while its
first is under way, is refused and leaves nothing.

Boxes need bubblewrap and cgroups (root): without them these tests skip, except in CI
(``CI`` set), where they fail."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from configs import Bot, bot, toml_config
from sandbox_support import require_boxes
from serve_support import Serve, ctl, end, stub, watch_until
from submit_support import python_bot, tar_gz
from waiting import PROCESS_POLL_S

from harness.protocol import ladder as lp
from harness.protocol import operator as op
from harness.sandbox import spare_cpus
from harness.storage.results import ResultsStore
from harness.tournament.runner import store_path

BUILT = ('runtime = "python"\ncommand = ["python", "start.py"]\n'
         'build = ["python", "-c", "open(\'/out/built.txt\', \'w\').write(\'built\')"]\n')
START = """import os, runpy, sys
print("where", os.getcwd(), os.getuid(), open("built.txt").read(), flush=True)
print("cpus", sorted(os.sched_getaffinity(0)), flush=True)
sys.argv = ["random_bot.py"]
runpy.run_path("random_bot.py", run_name="__main__")
"""
FAILING_BUILD = ('runtime = "python"\ncommand = ["python", "random_bot.py"]\n'
                 'build = ["python", "-c", "import sys; print(\'compiling the bot\'); '
                 'sys.exit(3)"]\n')
def tournament(name: str, hosted: str) -> str:
    """Two games of the hosted version ``hosted`` against the heuristic bot."""
    return toml_config(name, games=2, tc="5+10", rules={"form": "two-handed", "target": 3},
                       bots=(Bot("uploaded", extra=f"hosted = {json.dumps(hosted)}"),
                             bot("heuristic")))


CAP_MIB = 2  # serve --upload-max-mib


class HostServe(Serve):
    """A running ``serve`` that knows its output folder, bundles capped at 2 MiB."""

    def __init__(self, output: Path) -> None:
        super().__init__(output, "--upload-max-mib", str(CAP_MIB))
        self.output = output


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostServe]:
    require_boxes()
    server = HostServe(tmp_path_factory.mktemp("serve-hosted") / "out")
    try:
        server.wait_listening()
        yield server
    finally:
        server.kill()


def submitted(server: Serve, folder: Path, name: str) -> str:
    """``ctl submit`` ``folder`` as ``name``; the new version, once its build has ended."""
    done = ctl(server.address, "submit", name, str(folder))
    assert done.returncode == 0, done.stderr
    version = done.stdout.strip()
    assert version.startswith(f"{name}@"), done.stdout
    server.wait_for(lambda: json.loads(ctl(server.address, "--json", "build-log", version)
                                       .stdout)["build_state"] != "building",
                    f"{version}'s build", interval=PROCESS_POLL_S)
    return version


def start(server: Serve, folder: Path, name: str, hosted: str
          ) -> subprocess.CompletedProcess[str]:
    path = folder / f"{name}.toml"
    path.write_text(tournament(name, hosted), encoding="utf-8")
    return ctl(server.address, "start", str(path))


def test_a_submitted_bot_plays_a_tournament_in_a_box(running: HostServe, tmp_path: Path) -> None:
    folder = python_bot(tmp_path / "py", BUILT)
    (folder / "start.py").write_text(START)
    version = submitted(running, folder, "uploaded-py")
    assert version == "uploaded-py@1"
    log = ctl(running.address, "build-log", version)
    assert log.returncode == 0 and f"{version}: ready" in log.stderr, log.stderr
    # The next submission is the next version.
    assert submitted(running, python_bot(tmp_path / "py2"), "uploaded-py") == "uploaded-py@2"

    started = start(running, tmp_path, "hosted-serve", version)
    assert started.returncode == 0, started.stderr
    with grpc.insecure_channel(running.address) as channel:
        final = watch_until(stub(channel), "hosted-serve")
    assert op.status_name(final.status) == "finished", final.detail
    with ResultsStore(store_path(running.output / "hosted-serve")) as store:
        games = list(store.games("hosted-serve"))
    assert len(games) == final.games_done == final.games_total >= 2
    assert all("uploaded" in g.seats for g in games)
    assert [f for g in games for f in g.faults] == []
    assert {g.termination.value for g in games} == {"normal"}
    # It ran in a box (as nobody, in /bot), from its files with its build's output.
    logs = list((running.output / "hosted-serve" / "logs").rglob("uploaded-*.log"))
    assert logs, "the hosted bot's log"
    assert all("where /bot 65534 built" in p.read_text() for p in logs)
    # Off the referee's CPU, as on a ladder: pinned to every CPU but the first.
    spare = spare_cpus()
    pinned = sorted(os.sched_getaffinity(0)) if spare is None else list(spare)
    assert all(f"cpus {pinned}" in p.read_text() for p in logs), pinned


def test_a_failed_build_is_refused_at_start(running: HostServe, tmp_path: Path) -> None:
    version = submitted(running, python_bot(tmp_path / "broken", FAILING_BUILD), "broken")
    log = ctl(running.address, "build-log", version)
    assert "compiling the bot" in log.stdout and f"{version}: build failed" in log.stderr
    refused = start(running, tmp_path, "with-broken", version)
    assert refused.returncode != 0
    assert f"uploaded: {version} did not build: the build failed (exit code 3)" \
        in refused.stderr, refused.stderr
    unknown = start(running, tmp_path, "with-unknown", "nobody@1")
    assert unknown.returncode != 0 and "has no hosted bot 'nobody@1'" in unknown.stderr
    assert not (running.output / "with-broken").exists()


def test_hosted_is_for_serve_only(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(tournament("local", "x@1"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(path), "--output", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "hosted bots play on the serve" in done.stderr, done.stderr


SLOW_BUILD = ('runtime = "python"\ncommand = ["python", "random_bot.py"]\n'
              'build = ["python", "-c", "import time; time.sleep(600)"]\n')


def test_a_build_cut_by_kill_9_runs_again_after_a_restart(tmp_path: Path) -> None:
    require_boxes()
    output = tmp_path / "out"
    first = HostServe(output)
    second = None
    try:
        first.wait_listening()
        done = ctl(first.address, "submit", "phoenix", str(python_bot(tmp_path / "py",
                                                                      SLOW_BUILD)))
        assert done.returncode == 0 and done.stdout.strip() == "phoenix@1", done.stderr
        first.wait_for(lambda: list((output / ".uploads" / "tmp").glob("build-*")),
                       "the build to start")
        first.stop(signal.SIGKILL)
        # The record survives, still building; the version's build is made again (here
        # with a quicker build command, as the bundle's record says what to run).
        record = output / ".uploads" / "versions" / "phoenix@1.json"
        data = json.loads(record.read_text())
        assert data["state"] == "building"
        data["build"] = ["python", "-c", "print('built again')"]
        record.write_text(json.dumps(data))
        second = HostServe(output)
        second.wait_listening()
        assert not list((output / ".uploads" / "tmp").iterdir())  # swept at start
        second.wait_for(lambda: json.loads(ctl(second.address, "--json", "build-log",
                                               "phoenix@1").stdout)["build_state"] == "ready",
                        "the build to run again", interval=PROCESS_POLL_S)
        log = ctl(second.address, "build-log", "phoenix@1")
        assert "built again" in log.stdout, log.stdout
    finally:
        end([first, second])


def test_a_bundle_over_the_serve_cap_is_refused_and_leaves_nothing(running: HostServe,
                                                                   tmp_path: Path) -> None:
    big = python_bot(tmp_path / "big")
    (big / "noise.bin").write_bytes(os.urandom((CAP_MIB << 20) + 1000))
    done = ctl(running.address, "submit", "too-big", str(big))
    assert done.returncode == 2, done.stderr
    assert f"over this referee's cap of {CAP_MIB << 20} bytes" in done.stderr, done.stderr
    listed = ctl(running.address, "--json", "build-log", "too-big@1")
    assert listed.returncode == 2 and "no hosted bot named" in listed.stderr, listed.stderr
    assert not list((running.output / ".uploads" / "tmp").glob("*"))


def test_one_upload_at_a_time_per_bot(running: HostServe, tmp_path: Path) -> None:
    """While an upload of a bot is under way, a second one of the same bot is refused
    (RESOURCE_EXHAUSTED: ``ctl submit`` says so and exits 2); the first completes, and
    the next upload after it is the next version."""
    folder = python_bot(tmp_path / "bot")
    bundle = tar_gz(folder)
    release = threading.Event()

    def held() -> Iterator[op.SubmitHostedBotRequest]:
        yield op.SubmitHostedBotRequest(header=lp.SubmitHeader(
            name="held", format=lp.BUNDLE_FORMATS["tar.gz"], size=len(bundle),
            sha256=hashlib.sha256(bundle).hexdigest()))
        half = max(1, len(bundle) // 2)
        yield op.SubmitHostedBotRequest(chunk=bundle[:half])
        release.wait(120)
        yield op.SubmitHostedBotRequest(chunk=bundle[half:])

    leftovers = running.output / ".uploads" / "tmp"
    before = set(leftovers.iterdir()) if leftovers.is_dir() else set()
    with grpc.insecure_channel(running.address) as channel:
        try:
            first = stub(channel).SubmitHostedBot.future(held(), timeout=300)
            # The first upload's own file (not one an earlier test left) shows it is held.
            running.wait_for(lambda: leftovers.is_dir() and set(leftovers.iterdir()) - before,
                             "the first upload under way")
            second = ctl(running.address, "submit", "held", str(folder))
            assert second.returncode == 2, second.stderr
            assert "an upload of held is in progress: one at a time" in second.stderr
        finally:
            release.set()
        assert first.result().name == "held@1"
    assert submitted(running, folder, "held") == "held@2"
    assert not list(leftovers.glob("*"))
