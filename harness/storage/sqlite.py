"""What every store file shares: one SQLite connection per store object, guarded by a lock
and shared by the threads of a process; WAL journaling, so that other processes read
while one writes; explicit transactions; schema versions kept in the ``meta`` table and
brought up to date by a list of migration steps.

:class:`SQLiteFile` is the base of :class:`~harness.storage.results.ResultsStore` and
:class:`~harness.storage.ladder.LadderStore`; each names itself (``KIND``, for errors),
its version key and its steps, and says how to read its version from a file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Final, Self

from harness.errors import StoreError

__all__ = ["BUSY_TIMEOUT_S", "Migration", "SQLiteFile", "rollback"]

BUSY_TIMEOUT_S: Final = 5.0
"""How long a write waits for another process's write transaction to end."""

RETRY_S: Final = 0.02
"""Opening a new file, two processes that both turn it to WAL at once can meet in a lock
that waiting cannot resolve, and SQLite then tells one of them "database is locked" at
once instead of waiting: it opens again after this pause, until :data:`BUSY_TIMEOUT_S`."""

_BUSY_CODES: Final = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused for a lock held elsewhere (not for a broken file)."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _BUSY_CODES


Migration = Callable[[sqlite3.Connection], None]
"""One schema step: brings a file from version ``i`` to ``i + 1`` (``MIGRATIONS[i]``),
inside the caller's transaction."""


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open (SQLite ends some on its own)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class SQLiteFile:
    """One store file. Thread-safe; usable as a context manager. Subclasses set
    ``KIND``, ``VERSION_KEY`` and ``MIGRATIONS`` and implement :meth:`_version`."""

    KIND: ClassVar[str] = "store"
    VERSION_KEY: ClassVar[str] = "schema_version"
    MIGRATIONS: ClassVar[Sequence[Migration]] = ()
    SCHEMA_VERSION: ClassVar[int] = 0  # the version this code writes: one per step

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.SCHEMA_VERSION = len(cls.MIGRATIONS)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S,
                                   isolation_level=None,  # transactions are explicit
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.KIND} {self.path}: {exc}") from exc
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._set_up(conn)
                break
            except sqlite3.OperationalError as exc:
                if _busy(exc) and time.monotonic() < deadline:
                    rollback(conn)
                    time.sleep(RETRY_S)
                    continue
                conn.close()
                raise StoreError(
                    f"{self.path} is busy: other processes kept it locked for "
                    f"{BUSY_TIMEOUT_S:g} s ({exc})" if _busy(exc)
                    else self._unusable(exc)) from exc
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(self._unusable(exc)) from exc
            except BaseException:
                conn.close()
                raise
        self._connection = conn

    def _set_up(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # Reading the schema first turns "not a database" into one clear error.
        self._migrate(conn)
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")

    # ---------------------------------------------------------------- schema

    def _version(self, conn: sqlite3.Connection) -> int | None:
        """The file's version of this schema (``None``: a new file). Raises StoreError if
        the file is not usable."""
        raise NotImplementedError

    def _unusable(self, exc: sqlite3.DatabaseError) -> str:
        """The error for a file SQLite cannot use."""
        return f"{self.path} is not a usable {self.KIND}: {exc}"

    def _create(self, conn: sqlite3.Connection) -> None:
        """Set up a new file before its first migration step (nothing by default)."""

    def _newer(self, version: int) -> None:
        if version > self.SCHEMA_VERSION:
            raise StoreError(f"{self.path} has {self.KIND} schema version {version}, newer "
                             f"than this euchre-harness understands "
                             f"({self.SCHEMA_VERSION}); upgrade euchre-harness to use it")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if self._version(conn) == self.SCHEMA_VERSION:
            return
        # Take the write lock, then look again: another process may have migrated.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = self._version(conn)
            if version is None:
                self._create(conn)
                version = 0
            for step in range(version, self.SCHEMA_VERSION):
                self.MIGRATIONS[step](conn)
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                         (self.VERSION_KEY, str(self.SCHEMA_VERSION)))
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise

    # ---------------------------------------------------------------- plumbing

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; SQLite errors become :class:`StoreError`."""
        with self._lock:
            if self._connection is None:
                raise StoreError(f"{self.KIND} {self.path} is closed")
            try:
                yield self._connection
            except sqlite3.Error as exc:
                raise StoreError(f"{self.KIND} {self.path}: {exc}") from exc

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed on success, rolled back on any exception."""
        with self.reading() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise

    # ---------------------------------------------------------------- lifecycle

    def close(self) -> None:
        """Close the file. Further calls raise :class:`StoreError`; closing twice is fine."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"
