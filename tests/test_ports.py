"""The suite's own port drawing (tests/ports.py): a port one test process drew is not
drawn by another while the first lives, and is free again once it exits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ports import _claim, unused_port
from waiting import WAIT_S

TESTS = Path(__file__).resolve().parent


def _in_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", f"from ports import _claim, unused_port; {code}"],
                          cwd=TESTS, capture_output=True, text=True, timeout=WAIT_S,
                          check=False)


def test_a_drawn_port_stays_claimed_while_its_process_lives_and_is_free_after() -> None:
    port = unused_port()
    assert _in_child(f"print(_claim({port}))").stdout.split() == ["False"]
    assert _claim(port) is False  # a claim is one open file's lock: not twice here either
    drawn = _in_child("print(unused_port())")  # the child exits: its claim ends with it
    assert drawn.returncode == 0, drawn.stderr
    assert _claim(int(drawn.stdout)) is True
