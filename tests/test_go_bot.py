"""The Go sample bot (sample_bots/go/) and the stub recipes of
docs/bots-in-other-languages.md, run as written.

The Go bot is built once per module by the doc's recipe (the fenced block after
``<!-- recipe: go -->``), in a copy of ``proto/`` and ``sample_bots/go/``, then plays
complete games against the Python bots over real gRPC, as a real process. The C++ stub
recipe (``<!-- recipe: cpp -->``) is run the same way. Without the tools these tests
skip, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_support import harness_command

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "bots-in-other-languages.md"
GO_TOOLS = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
CPP_TOOLS = ("protoc", "grpc_cpp_plugin")
GO_HINT = ("apt-get install -y golang-go golang-google-grpc-dev "
           "golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev protoc-gen-go "
           "protoc-gen-go-grpc protobuf-compiler")


def recipe(name: str) -> str:
    """The fenced block after ``<!-- recipe: NAME -->`` in the doc."""
    found = re.search(rf"<!-- recipe: {name} -->\n```sh\n(.*?)\n```", DOC.read_text(), re.S)
    assert found, f"no '<!-- recipe: {name} -->' block in {DOC}"
    return found.group(1)


def need(tools: tuple[str, ...], hint: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        message = f"not on PATH: {', '.join(missing)}; install them: {hint}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def run_recipe(name: str, folder: Path) -> None:
    done = subprocess.run(["bash", "-eu", "-c", recipe(name)], cwd=folder, text=True,
                          capture_output=True, timeout=900, check=False)
    assert done.returncode == 0, f"the {name} recipe failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def go_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need(GO_TOOLS, GO_HINT)
    folder = tmp_path_factory.mktemp("go-recipe")
    shutil.copytree(ROOT / "proto", folder / "proto")
    (folder / "sample_bots" / "go").mkdir(parents=True)
    shutil.copy(ROOT / "sample_bots" / "go" / "random_bot.go", folder / "sample_bots" / "go")
    run_recipe("go", folder)
    exe = folder / "sample_bots" / "go" / "build" / "random_bot"
    assert exe.is_file(), f"the recipe made no {exe}"
    return exe


def match(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    done = harness_command("match", "--json", "--log-dir", str(tmp_path / "logs"),
                           "--store", str(tmp_path / "matches.sqlite"), *args)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("form", ["four-handed", "two-handed"])
def test_the_go_bot_built_by_the_recipe_plays_complete_games(
        go_bot: Path, tmp_path: Path, form: str) -> None:
    games = match(tmp_path, "--form", form, "--games", "2", "--bot", f"go={go_bot}",
                  "--bot", "heuristic={python} -m sample_bots.heuristic_bot")
    assert len(games) == 2
    for record in games:
        assert record["termination"] == "normal", record.get("detail")
        assert record["faults"] == [] and "go" in record["seats"]
        assert len(record["hands"]) >= 1


def test_the_go_bot_is_refused_with_a_wrong_token_and_says_so(go_bot: Path,
                                                              tmp_path: Path) -> None:
    """Against a referee that does not know its token, it exits 2 naming the refusal."""
    games = match(tmp_path, "--games", "1", "--max-startup-failures", "0",
                  "--bot", f"go={go_bot} -token wrong-token",
                  "--bot", "random={python} -m sample_bots.random_bot")
    assert games[0]["termination"] == "forfeit"
    log = (tmp_path / "logs" / "go-0.log").read_text()
    assert "go-random: refused: REFUSAL_REASON_BAD_TOKEN" in log, log


def test_the_cpp_stub_recipe_runs_as_written(tmp_path: Path) -> None:
    need(CPP_TOOLS, "apt-get install -y protobuf-compiler-grpc")
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    run_recipe("cpp", tmp_path)
    made = sorted(p.name for p in (tmp_path / "gen" / "euchre" / "v1").iterdir())
    assert made == ["euchre.grpc.pb.cc", "euchre.grpc.pb.h", "euchre.pb.cc", "euchre.pb.h",
                    "referee.grpc.pb.cc", "referee.grpc.pb.h", "referee.pb.cc",
                    "referee.pb.h"]
