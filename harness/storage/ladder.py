"""The ladder's tables, kept in the same SQLite file as the results store.

:class:`LadderStore` opens the file with :class:`~harness.storage.results.ResultsStore` first (so
the file is a results store at the current schema, and finished games go where the
results package reads them), then keeps its own tables beside the results tables. The
ladder's schema has its own version, ``ladder_schema_version`` in the ``meta`` table,
and its own list of migration steps, so the two schemas evolve independently.

One connection per store, shared by the threads of a process under a lock; WAL
journaling, so the results store and readers in other processes can use the file at the
same time.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable
from typing import Final

from harness.storage.results import ResultsStore
from harness.storage.sqlite import SQLiteFile

__all__ = ["BOTS_CHANGES_KEY", "LadderStore"]

_VERSION_KEY: Final = "ladder_schema_version"
_DEAL_KEY: Final = "ladder_deal_key"


def _migrate_to_v1(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE ladder_bots (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            base TEXT NOT NULL,
            version INTEGER NOT NULL,
            previous_id INTEGER REFERENCES ladder_bots(id),
            owner TEXT NOT NULL,
            description TEXT NOT NULL,
            concurrency INTEGER NOT NULL,
            key_id TEXT NOT NULL UNIQUE,
            token_salt BLOB NOT NULL,
            token_hash BLOB NOT NULL,
            created_at TEXT NOT NULL,
            retired_at TEXT,
            UNIQUE (base, version)
        )"""
    )
    conn.execute(
        """CREATE TABLE ladder_benches (
            id INTEGER PRIMARY KEY,
            bot_id INTEGER NOT NULL REFERENCES ladder_bots(id),
            started_at REAL NOT NULL,
            until REAL NOT NULL,
            repeat INTEGER NOT NULL,
            reason TEXT NOT NULL,
            lifted_at REAL
        )"""
    )
    conn.execute("CREATE INDEX ladder_benches_by_bot ON ladder_benches(bot_id)")
    conn.execute(
        """CREATE TABLE ladder_sets (
            key TEXT PRIMARY KEY,
            seed INTEGER NOT NULL,
            base_json TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT,
            started_at TEXT NOT NULL,
            finished_at TEXT
        )"""
    )
    conn.execute(
        """CREATE TABLE ladder_rating_history (
            id INTEGER PRIMARY KEY,
            games INTEGER NOT NULL,
            at TEXT NOT NULL,
            players_json TEXT NOT NULL
        )"""
    )


def _migrate_to_v2(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE ladder_hosted (
            bot_id INTEGER PRIMARY KEY REFERENCES ladder_bots(id),
            sha256 TEXT NOT NULL,
            root TEXT NOT NULL,
            runtime TEXT NOT NULL,
            command_json TEXT NOT NULL,
            build_json TEXT NOT NULL,
            state TEXT NOT NULL,
            detail TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )


BOTS_CHANGES_KEY: Final = "ladder_bots_changes"
"""The ``meta`` key counting writes to ``ladder_bots`` (kept by triggers, so writes from
any process count): a reader holding the table in memory re-reads it when this moves."""


def _migrate_to_v3(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '0')", (BOTS_CHANGES_KEY,))
    for event in ("INSERT", "UPDATE", "DELETE"):
        conn.execute(
            f"CREATE TRIGGER ladder_bots_changed_{event.lower()} AFTER {event} ON ladder_bots "
            f"BEGIN UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
            f"WHERE key = '{BOTS_CHANGES_KEY}'; END")
    # The sets in flight (cut short when a ladder starts again) without a full scan.
    conn.execute("CREATE INDEX ladder_sets_by_status ON ladder_sets(status)")


# _MIGRATIONS[i] upgrades the ladder tables from version i to i + 1, inside the caller's
# transaction. Never edit a released step; append a new one.
_MIGRATIONS: Final[tuple[Callable[[sqlite3.Connection], None], ...]] = (
    _migrate_to_v1, _migrate_to_v2, _migrate_to_v3)


class LadderStore(SQLiteFile):
    """The ladder tables of one store file. Thread-safe; usable as a context manager."""

    KIND = "ladder store"
    VERSION_KEY = _VERSION_KEY
    MIGRATIONS = _MIGRATIONS

    def __init__(self, path: str | os.PathLike[str]) -> None:
        ResultsStore(path).close()  # creates or migrates the results schema (and meta)
        super().__init__(path)

    def _version(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
        version = int(row[0]) if row is not None else 0
        self._newer(version)
        return version

    def deal_key(self) -> str:
        """The ladder's secret deal key (256 random bits, as hex), made on first use.
        Every deal seed derives from it, so no bot can work out a deal from what it
        sees (a game's id, the set's number, the configuration's public ``seed``)."""
        with self.writing() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                         "DO NOTHING", (_DEAL_KEY, secrets.token_hex(32)))
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (_DEAL_KEY,)).fetchone()
        return str(row[0])
