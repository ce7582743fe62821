"""Every command block of README.md, docs/ladder.md, docs/cluster.md, docs/research.md,
docs/bots-in-other-languages.md and docs/hosting.md runs as written, in order, in a
fresh folder (a copy of the checkout's examples, sample bots and protos), and none
fails. The docs that follow on from the Quick start (their commands use its results) run
in one folder, one after the other; a doc that stands alone runs in a folder of its own.

A block is an indented or fenced code block. Shell blocks run with ``bash -eu`` (each
``export`` line stays in force for the blocks after it); ``python`` blocks with this
interpreter. An HTML comment before a block (invisible on the rendered page) says how
to treat it:

* ``<!-- doc-walk: skip: WHY -->``: not run (a synopsis with placeholders, a file's
  contents, a command for another machine, an interactive one);
* ``<!-- doc-walk: instead: COMMAND -->``: run COMMAND in its place (the Quick start's
  install, which here is the checkout itself);
* ``<!-- doc-walk: start NAME until TEXT -->``: a long-running command (one line): start
  it and go on once its output says TEXT; ``<!-- doc-walk: stop NAME -->`` (anywhere)
  stops it there with SIGINT, as Ctrl-C does, and it must exit cleanly.

``euchre-harness`` and ``python`` are this checkout and interpreter. The default ports
the docs use (50051, 8080) are replaced by free ones, and ``EUCHRE_REFEREE_ADDRESS``
points ``ctl`` at the first.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from ports import unused_port

ROOT = Path(__file__).resolve().parent.parent
CHAINS = {
    "quick-start-on": ("README.md", "docs/ladder.md", "docs/cluster.md", "docs/research.md"),
    "other-languages": ("docs/bots-in-other-languages.md",),
    "hosting": ("docs/hosting.md",),
}
"""The docs walked, by the folder they are walked in."""
DOCS = tuple(doc for chain in CHAINS.values() for doc in chain)
MARK = re.compile(r"^<!--\s*doc-walk:\s*(.*?)\s*-->\s*$")
COPIED = ("examples", "sample_bots", "proto")
WAIT_S = 180.0


@dataclass
class Step:
    doc: str
    line: int
    kind: str  # "shell", "python", "skip", "instead", "start", "stop"
    text: str = ""
    name: str = ""
    until: str = ""


def steps(doc: str) -> Iterator[Step]:
    """The doc's blocks and markers, in order."""
    lines = (ROOT / doc).read_text().split("\n")
    pending: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        mark = MARK.match(line)
        if mark:
            directive = mark.group(1)
            if directive.startswith("stop "):
                yield Step(doc, i + 1, "stop", name=directive.split()[1])
            else:
                pending = directive
            i += 1
            continue
        fence = re.match(r"^```(\w*)\s*$", line)
        start = i
        if fence:
            end = lines.index("```", i + 1)
            body, lang, i = "\n".join(lines[i + 1:end]), fence.group(1), end + 1
        elif (line.startswith("    ") and (not lines[i - 1].strip() or MARK.match(lines[i - 1]))
              and _not_in_list(lines, i)):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or (
                    not lines[end].strip() and end + 1 < len(lines)
                    and lines[end + 1].startswith("    "))):
                end += 1
            body, lang, i = "\n".join(x[4:] for x in lines[i:end]), "sh", end
        else:
            i += 1
            continue
        yield _step(doc, start + 1, lang, body, pending)
        pending = None


def _not_in_list(lines: list[str], i: int) -> bool:
    """An indented block, not the continuation of a list item."""
    j = i - 1
    while j >= 0 and (not lines[j].strip() or MARK.match(lines[j])):
        j -= 1
    return j < 0 or not lines[j].lstrip().startswith(("* ", "- ", "1.", "2.", "3.", "4."))


def _step(doc: str, line: int, lang: str, body: str, directive: str | None) -> Step:
    if directive is None:
        if lang not in ("sh", "bash", "python"):
            raise AssertionError(f"{doc}:{line}: a {lang or 'text'} block needs a doc-walk "
                                 f"marker (skip: WHY)")
        return Step(doc, line, "python" if lang == "python" else "shell", body)
    if directive.startswith("skip:"):
        return Step(doc, line, "skip", body)
    if directive.startswith("instead:"):
        return Step(doc, line, "shell", directive.removeprefix("instead:").strip())
    start = re.match(r"start (\S+) until (.+)$", directive)
    if start:
        return Step(doc, line, "start", body.strip(), start.group(1), start.group(2))
    raise AssertionError(f"{doc}:{line}: unknown doc-walk marker {directive!r}")


def test_every_doc_has_only_known_markers_and_classified_blocks() -> None:
    for doc in DOCS:
        found = list(steps(doc))
        assert found, doc
        # A long-running command is a block of its own: one line.
        assert all("\n" not in s.text for s in found if s.kind == "start"), doc
        started = {s.name for s in found if s.kind == "start"}
        stopped = {s.name for s in found if s.kind == "stop"}
        assert started == stopped, (doc, started, stopped)


@pytest.mark.slow
@pytest.mark.timeout(900)  # the C++ and Go builds from scratch, on a busy machine
@pytest.mark.parametrize("chain", list(CHAINS))
def test_every_documented_command_runs_as_written_in_order(chain: str, tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    for name in COPIED:
        shutil.copytree(ROOT / name, folder / name, symlinks=True,
                        ignore=shutil.ignore_patterns("node_modules", "build", "__pycache__"))
    modules = ROOT / "sample_bots" / "node" / "node_modules"
    if modules.exists():
        (folder / "sample_bots" / "node" / "node_modules").symlink_to(modules.resolve())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, argv in (("euchre-harness", f'"{sys.executable}" -m harness'),
                       ("python", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {argv} "$@"\n')
        shim.chmod(0o755)
    ports = {"50051": str(unused_port()), "8080": str(unused_port())}
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT), "EUCHRE_REFEREE_ADDRESS": f"127.0.0.1:{ports['50051']}"}
    env.pop("EUCHRE_OPERATOR_TOKEN", None)
    exports: list[str] = []
    running: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}

    def port_free(text: str) -> str:
        for old, new in ports.items():
            text = text.replace(old, new)
        return text

    try:
        for doc in CHAINS[chain]:
            for step in steps(doc):
                where = f"{step.doc}:{step.line}"
                text = port_free(step.text)
                if step.kind == "skip":
                    continue
                if step.kind == "python":
                    done = subprocess.run([sys.executable, "-c", text], cwd=folder, env=env,
                                          capture_output=True, text=True, timeout=300)
                    assert done.returncode == 0, f"{where}:\n{text}\n{done.stderr}"
                elif step.kind == "shell":
                    exports += [ln for ln in text.splitlines() if ln.startswith("export ")]
                    script = "\n".join([*exports, text])
                    done = subprocess.run(["bash", "-eu", "-c", script], cwd=folder, env=env,
                                          capture_output=True, text=True, timeout=600)
                    assert done.returncode == 0, (
                        f"{where} failed ({done.returncode}):\n{text}\n{done.stdout[-3000:]}"
                        f"\n{done.stderr[-3000:]}")
                elif step.kind == "start":
                    log = tmp_path / f"{step.name}.log"
                    with log.open("wb") as out:
                        proc = subprocess.Popen(
                            ["bash", "-eu", "-c", "\n".join([*exports, "exec " + text])],
                            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
                    running[step.name] = (proc, log)
                    deadline = time.monotonic() + WAIT_S
                    while step.until not in log.read_text(errors="replace"):
                        assert proc.poll() is None, f"{where} exited:\n{log.read_text()}"
                        assert time.monotonic() < deadline, f"{where}:\n{log.read_text()}"
                        time.sleep(0.2)
                else:  # stop
                    proc, log = running.pop(step.name)
                    proc.send_signal(signal.SIGINT)
                    code = proc.wait(120)
                    assert code == 0, f"{where}: {step.name} exited {code}:\n{log.read_text()}"
    finally:
        for proc, _ in running.values():
            proc.kill()
            proc.wait(30)
