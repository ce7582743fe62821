"""Opening a store that other processes hold locked: a lock that waiting cannot resolve is
tried again, and a store locked for longer than the busy timeout is refused as busy, never
called corrupt."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from serve_support import REPO
from waiting import WAIT_S

from harness.errors import StoreError
from harness.storage.results import ResultsStore
from harness.storage.sqlite import BUSY_TIMEOUT_S

HOLDER = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
"""


def test_a_store_locked_longer_than_the_busy_timeout_is_refused_as_busy(
        tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    ResultsStore(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # as a new file is
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path),
                               str(BUSY_TIMEOUT_S + 60)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(StoreError) as refused:
            ResultsStore(path)
    finally:
        holder.kill()
        holder.wait(WAIT_S)
    assert "is busy: other processes kept it locked" in str(refused.value)
    assert "corrupt" not in str(refused.value)


class _DeadlockOnce(ResultsStore):
    """A store whose first set-up meets the lock SQLite cannot wait on (two processes
    turning a new file to WAL at once): it reports "database is locked" at once."""

    tries = 0

    def _set_up(self, conn: sqlite3.Connection) -> None:
        type(self).tries += 1
        if type(self).tries == 1:
            conn.execute("BEGIN IMMEDIATE")  # a transaction left open by the failure
            error = sqlite3.OperationalError("database is locked")
            error.sqlite_errorcode = sqlite3.SQLITE_BUSY
            raise error
        super()._set_up(conn)


def test_a_lock_that_waiting_cannot_resolve_is_tried_again(tmp_path: Path) -> None:
    _DeadlockOnce.tries = 0
    with _DeadlockOnce(tmp_path / "results.sqlite") as store:
        assert store.tournament_summaries() == []
    assert _DeadlockOnce.tries == 2
