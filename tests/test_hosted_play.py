"""Hosted bots built and played in boxes on a running ladder: the sample bots (Python,
Node, C++) submitted as uploads over real gRPC and played in boxes against the house
bots in every form, their games stored. The C++ bot is the executable that
tests/test_cpp_bot.py builds once, in the same build box as hosted bots' builds; a
native build's output is what plays. A build that fails is ``build
failed`` in the standings and in ``ctl build-log``, and never plays or forfeits.

Boxes need bubblewrap and cgroups (root): without them these tests skip, except in CI
(``CI`` set), where they fail. The Node bot needs the sample's npm packages and the C++
one the toolchain of tests/test_cpp_bot.py; without them those skip, except in CI."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import harness_command
from configs import RANDOM_AND_HEURISTIC
from sandbox_support import require_boxes
from serve_support import REPO, end
from submit_support import (
    HOUSE,
    OPERATOR_TOKEN,
    QUIET,
    HostLadder,
    bearer,
    python_bot,
    submit,
    tar_gz,
    tar_of,
)
from test_cpp_bot import cpp_bot  # noqa: F401  (a fixture: the executable, built once)
from waiting import WAIT_S

from harness.hosting.build import BUILD_LIMITS
from harness.protocol import ladder as lp
from harness.referee.outcome import FaultKind
from harness.sandbox.scratch import mount_points
from harness.storage.results import ResultsStore

FAILING_BUILD = ('runtime = "python"\ncommand = ["python", "random_bot.py"]\n'
                 'build = ["python", "-c", "import sys; print(\'compiling the bot\'); '
                 'sys.exit(3)"]\n')


def missing(reason: str) -> None:
    """Skip outside CI, fail in CI."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


FORMS = ("four-handed", "two-handed", "cutthroat")


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostLadder]:
    """A two-handed ladder with the random and heuristic house bots."""
    require_boxes()
    running = HostLadder(tmp_path_factory.mktemp("hosted"), bots=HOUSE)
    try:
        yield running
    finally:
        running.kill()


@pytest.fixture(scope="module", params=FORMS)
def form_ladder(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostLadder]:
    """A ladder of each form with the random and heuristic house bots, which play only
    the hosted bots."""
    require_boxes()
    running = HostLadder(tmp_path_factory.mktemp(f"hosted-{request.param}"), QUIET,
                         bots=RANDOM_AND_HEURISTIC, form=request.param)
    try:
        yield running
    finally:
        running.kill()


def build_log(ladder: HostLadder, name: str, token: str = OPERATOR_TOKEN
              ) -> lp.GetBuildLogResponse:
    with ladder.channel() as channel:
        answer: lp.GetBuildLogResponse = lp.LadderServiceStub(channel).GetBuildLog(
            lp.GetBuildLogRequest(name=name), metadata=bearer(token), timeout=60)
    return answer


def games_of(ladder: HostLadder, bot: str) -> list[dict[str, Any]]:
    with ladder.channel() as channel:
        answer = lp.LadderServiceStub(channel).ListGames(
            lp.ListGamesRequest(bot=bot, limit=100), metadata=bearer(OPERATOR_TOKEN),
            timeout=60)
    return [lp.game_to_dict(g) for g in answer.games]


def standings(ladder: HostLadder) -> dict[str, dict[str, Any]]:
    with ladder.channel() as channel:
        answer = lp.LadderServiceStub(channel).GetStandings(
            lp.GetStandingsRequest(), metadata=bearer(OPERATOR_TOKEN), timeout=60)
    return {s.name: lp.standing_to_dict(s) for s in answer.standings}


def submit_and_play(ladder: HostLadder, folder: Path, name: str,
                    timeout: float = WAIT_S) -> list[dict[str, Any]]:
    """Submit ``folder``, wait for its build and for two of its games; returns them."""
    with ladder.channel() as channel:
        answer = submit(channel, tar_gz(folder), name)
    assert answer.bot.hosted
    ladder.wait_for(lambda: build_log(ladder, name).build_state != "building",
                    f"{name}'s build", timeout)
    built = build_log(ladder, name, answer.token)
    assert built.build_state == "ready", (built.detail, built.log)
    ladder.wait_for(lambda: sum(g["termination"] == "normal"
                                for g in games_of(ladder, name)) >= 2,
                    f"two games of {name}")
    games = games_of(ladder, name)
    with ResultsStore(ladder.store) as results:
        stored = {g.game_key: g for g in results.games() if name in g.seats}
    # It played as a player like any other, in its seats of the form, and every game is
    # stored. No fault is its own; a game ends otherwise than normally only when a house
    # bot (not boxed) could not start within the ladder's 10 s, as on a machine loaded
    # by a second copy of the suite.
    players = {"four-handed": 4, "two-handed": 2, "cutthroat": 3}[ladder.form]
    assert all(len(g["seats"]) == players and name in g["seats"] for g in games)
    assert {g["game_key"] for g in games} <= set(stored)
    for g in games:
        faults = stored[g["game_key"]].faults
        assert all(f.bot != name for f in faults), (g, faults)
        assert g["termination"] == "normal" or (faults and all(
            f.kind is FaultKind.STARTUP_FAILURE for f in faults)), (g, faults)
    return games


def test_the_python_sample_plays_in_a_box(form_ladder: HostLadder, tmp_path: Path) -> None:
    submit_and_play(form_ladder, python_bot(tmp_path / "py"), "hosted-py")
    logs = list((form_ladder.folder / "out" / "logs").glob("hosted-py-*.log"))
    assert logs, "the hosted bot's log"


def test_a_failed_build_is_shown_and_never_plays(ladder: HostLadder, tmp_path: Path) -> None:
    folder = python_bot(tmp_path / "broken", FAILING_BUILD)
    with ladder.channel() as channel:
        answer = submit(channel, tar_gz(folder), "broken-build")
    assert answer.bot.build_state == "building"
    ladder.wait_for(lambda: build_log(ladder, "broken-build").build_state == "build failed",
                    "the build to fail")
    failed = build_log(ladder, "broken-build", answer.token)
    assert "compiling the bot" in failed.log
    assert "3" in failed.detail, failed.detail
    row = standings(ladder)["broken-build"]
    assert row["build"] == "build failed" and row["games"] == 0
    done = harness_command("ctl", "--address", ladder.address, "standings", cwd=REPO,
                           env={**ladder.env, "EUCHRE_OPERATOR_TOKEN": OPERATOR_TOKEN})
    line = next(x for x in done.stdout.splitlines() if x.startswith("broken-build "))
    assert line.rstrip().endswith("build failed")
    log_cli = harness_command(
        "ctl", "--address", ladder.address, "build-log", "broken-build", cwd=REPO,
        env={**ladder.env, "EUCHRE_OPERATOR_TOKEN": "", "EUCHRE_BOT_TOKEN": answer.token})
    assert log_cli.returncode == 0 and "compiling the bot" in log_cli.stdout
    assert "broken-build: build failed" in log_cli.stderr
    # The house bot goes on playing; the broken bot has no game at all (no forfeits).
    ladder.wait_for(lambda: len(games_of(ladder, "random")) >= 4, "the house bot's games")
    assert games_of(ladder, "broken-build") == []
    with ResultsStore(ladder.store) as results:
        assert not [g for g in results.games() if "broken-build" in g.seats]


def test_a_build_that_writes_without_end_fails_at_its_cap_and_keeps_nothing(
        ladder: HostLadder, tmp_path: Path) -> None:
    # The attack: a build that writes its /out until the disk is full, which the results
    # store shares. /out is a tmpfs of 1 GiB (harness/sandbox/scratch.py): the write
    # stops there, the build fails, and nothing of it reaches the disk.
    folder = python_bot(tmp_path / "filler", 'runtime = "python"\n'
                        'command = ["python", "random_bot.py"]\n'
                        'build = ["sh", "-c", "cat /dev/zero > /out/fill"]\n')
    with ladder.channel() as channel:
        answer = submit(channel, tar_gz(folder), "disk-filler")
    ladder.wait_for(lambda: build_log(ladder, "disk-filler").build_state == "build failed",
                    "the build to fail")
    failed = build_log(ladder, "disk-filler", answer.token)
    assert failed.detail == f"the build's output filled /out (at most {BUILD_LIMITS.out_mib} MiB)"
    kept = ladder.uploads / "builds" / "disk-filler"
    assert (kept / "build.log").is_file() and not (kept / "out").exists()
    assert [p for p in mount_points() if ladder.uploads in p.parents] == []
    assert standings(ladder)["disk-filler"]["games"] == 0
    before = len(games_of(ladder, "random"))
    ladder.wait_for(lambda: len(games_of(ladder, "random")) > before, "the house bot's games")


def test_a_build_cannot_write_through_links_or_leave_set_id_programs_on_the_host(
        ladder: HostLadder, tmp_path: Path) -> None:
    # The attack: the bundle holds links x_i -> y_i (to names inside it, so the upload's
    # checks pass); the build makes each y_i a link to a file of the host and writes a
    # file x_i, and copies a program with the set-user-ID bit. Laying the output over the
    # files must replace x_i, never write through it (as root, onto the host), and what
    # lands on the host belongs to the referee, without set-id bits.
    victim = tmp_path / "victim"
    victim.mkdir()
    pairs = 12  # the order of a folder's entries decides which of a pair comes first
    script = "".join(f"ln -s {victim}/pwned_{i} /out/y{i} && echo owned > /out/x{i} && "
                     for i in range(pairs))
    script += "cp /bin/true /out/setid && chmod 6755 /out/setid"
    manifest = (b'runtime = "python"\ncommand = ["python", "random_bot.py"]\n'
                b'build = ["sh", "-c", "' + script.encode() + b'"]\n')
    links = []
    for i in range(pairs):
        link = tarfile.TarInfo(f"x{i}")
        link.type, link.linkname = tarfile.SYMTYPE, f"y{i}"
        links.append(link)
    bundle = tar_of([("bot.toml", manifest),
                     ("random_bot.py", (REPO / "sample_bots" / "random_bot.py").read_bytes()),
                     *links])
    with ladder.channel() as channel:
        answer = submit(channel, bundle, "link-writer")
    ladder.wait_for(lambda: build_log(ladder, "link-writer").build_state != "building",
                    "the build")
    assert list(victim.iterdir()) == []  # nothing was written through a link
    built = build_log(ladder, "link-writer", answer.token)
    assert built.build_state == "ready", (built.detail, built.log)
    kept = ladder.uploads / "builds" / "link-writer"
    run = kept / "run"
    for i in range(pairs):
        assert (run / f"x{i}").read_text() == "owned\n" and not (run / f"x{i}").is_symlink()
        assert os.readlink(run / f"y{i}") == f"{victim}/pwned_{i}"  # a link, inside the box
    for path in [kept, *kept.rglob("*")]:
        info = path.lstat()
        assert info.st_uid == os.getuid(), path
        assert info.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | 0o022) == 0 \
            or stat.S_ISLNK(info.st_mode), (path, oct(info.st_mode))
    assert (run / "setid").stat().st_mode & 0o7777 == 0o755
    # The output takes the disk once: the run folder's files are the output's.
    assert (run / "setid").stat().st_ino == (kept / "out" / "setid").stat().st_ino
    ladder.wait_for(lambda: len(games_of(ladder, "link-writer")) >= 2, "two of its games")
    assert all(g["termination"] == "normal" for g in games_of(ladder, "link-writer"))


def _node_folder(folder: Path) -> Path:
    modules = REPO / "sample_bots" / "node" / "node_modules"
    if not (modules / "@grpc" / "grpc-js").is_dir() or shutil.which("node") is None:
        missing("the Node sample needs node and its packages (npm ci --prefix "
                "sample_bots/node)")
    node = folder / "sample_bots" / "node"
    node.mkdir(parents=True)
    for name in ("random_bot.js", "package.json"):
        shutil.copy(REPO / "sample_bots" / "node" / name, node / name)
    shutil.copytree(modules, node / "node_modules", symlinks=True)
    shutil.copytree(REPO / "proto", folder / "proto")
    (folder / "bot.toml").write_text(
        'runtime = "node"\ncommand = ["node", "sample_bots/node/random_bot.js"]\n')
    return folder


def test_the_node_sample_plays_in_a_box(form_ladder: HostLadder, tmp_path: Path) -> None:
    submit_and_play(form_ladder, _node_folder(tmp_path / "node"), "hosted-node")


def test_the_cpp_sample_plays_in_a_box(form_ladder: HostLadder, tmp_path: Path,
                                       cpp_bot: Path) -> None:  # noqa: F811
    folder = tmp_path / "cpp-bin"
    folder.mkdir()
    shutil.copy(cpp_bot, folder / "random_bot")
    (folder / "bot.toml").write_text('runtime = "native"\ncommand = ["random_bot"]\n')
    submit_and_play(form_ladder, folder, "hosted-cpp")


def test_a_native_build_makes_the_command_that_plays(ladder: HostLadder, tmp_path: Path,
                                                    cpp_bot: Path) -> None:  # noqa: F811
    # The build puts the native command in /out; the run gets the files with /out laid
    # over them. (The C++ sample itself is compiled in the same build box by the cpp_bot
    # fixture: one C++ build per test run.)
    folder = tmp_path / "native"
    (folder / "prebuilt").mkdir(parents=True)
    shutil.copy(cpp_bot, folder / "prebuilt" / "random_bot")
    (folder / "bot.toml").write_text(
        'runtime = "native"\ncommand = ["build/random_bot"]\n'
        'build = ["sh", "-c", "mkdir -p /out/build && cp prebuilt/random_bot /out/build/ '
        '&& echo made build/random_bot"]\n')
    submit_and_play(ladder, folder, "built-native")
    assert "made build/random_bot" in build_log(ladder, "built-native").log  # kept


def test_a_hosted_bot_is_never_handed_to_a_stream(ladder: HostLadder, tmp_path: Path) -> None:
    """The token of a hosted bot does not seat a bot that dials in: its seats are its
    boxes'."""
    with ladder.channel() as channel:
        answer = submit(channel, tar_gz(python_bot(tmp_path / "py")), "no-dial")
    ladder.wait_for(lambda: "no-dial" in standings(ladder), "the bot in the standings")
    intruder = subprocess.run(
        [sys.executable, "-m", "sample_bots.random_bot", "--address", ladder.address,
         "--token", answer.token], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True, text=True, timeout=WAIT_S, check=False)
    assert intruder.returncode != 0
    assert "refused" in intruder.stderr.lower(), intruder.stderr[-2000:]


@pytest.mark.long
def test_a_hosted_bot_plays_again_after_kill_9(tmp_path: Path) -> None:
    require_boxes()
    first = HostLadder(tmp_path, QUIET, bots=RANDOM_AND_HEURISTIC, name="restart-ladder")
    second = None
    try:
        with first.channel() as channel:
            submit(channel, tar_gz(python_bot(tmp_path / "py")), "phoenix")
        first.wait_for(lambda: len(games_of(first, "phoenix")) >= 1, "a game of phoenix")
        first.stop(signal.SIGKILL)
        before = len(games_of_store(first.store, "phoenix"))
        second = HostLadder(tmp_path, name="restart-ladder")
        second.wait_for(lambda: len(games_of_store(second.store, "phoenix")) > before,
                        "phoenix to play again")
        assert build_log(second, "phoenix").build_state == "ready"
    finally:
        end([first, second])


def games_of_store(store: Path, bot: str) -> list[str]:
    with ResultsStore(store) as results:
        return [g.game_key for g in results.games() if bot in g.seats]
