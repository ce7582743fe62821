"""The ladder's tables, kept in the same SQLite file as the results store.

:class:`LadderStore` opens the file with :class:`~harness.storage.results.ResultsStore` first (so
the file is a results store at the current schema, and finished games go where the
results package reads them), then keeps its own tables beside the results tables. The
ladder's schema has its own version, ``ladder_schema_version`` in the ``meta`` table,
and its own list of migration steps, so the two schemas evolve independently.

One connection per store, shared by the threads of a process under a lock; WAL
journaling, so the results store and readers in other processes can use the file at the
same time.

Every query of the ladder's tables is a method here; the ladder's modules (registry,
sets, quarantine, ratings, uploads) call them and hold no SQL. A method runs inside the
caller's transaction when there is one (``with store.writing(): ...`` groups several
calls into one), else on its own.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Callable, Collection
from typing import Final, NamedTuple

from harness.storage.results import ResultsStore
from harness.storage.sqlite import SQLiteFile

__all__ = ["BOTS_CHANGES_KEY", "BenchRow", "BotRow", "HostedRow", "LadderStore", "SetRow"]

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


class BotRow(NamedTuple):
    """One row of ``ladder_bots`` without its token material."""

    id: int
    name: str
    base: str
    version: int
    previous_id: int | None
    owner: str
    description: str
    concurrency: int
    created_at: str
    retired_at: str | None


class BenchRow(NamedTuple):
    """One row of ``ladder_benches``, with its bot's name."""

    bot: str
    started_at: float
    until: float
    repeat: int
    reason: str
    lifted_at: float | None


class SetRow(NamedTuple):
    """One row of ``ladder_sets`` (the base arrangement still as JSON)."""

    key: str
    base_json: str
    status: str
    reason: str | None


class HostedRow(NamedTuple):
    """One row of ``ladder_hosted``, with its bot's name."""

    name: str
    sha256: str
    root: str
    runtime: str
    command_json: str
    build_json: str
    state: str
    detail: str


_BOT_COLUMNS: Final = ("id, name, base, version, previous_id, owner, description, "
                       "concurrency, created_at, retired_at")
_BENCH_SELECT: Final = ("SELECT b.name, s.started_at, s.until, s.repeat, s.reason, "
                        "s.lifted_at FROM ladder_benches s JOIN ladder_bots b "
                        "ON b.id = s.bot_id")
_HOSTED_SELECT: Final = ("SELECT b.name, h.sha256, h.root, h.runtime, h.command_json, "
                         "h.build_json, h.state, h.detail FROM ladder_hosted h "
                         "JOIN ladder_bots b ON b.id = h.bot_id")


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

    def _execute(self, sql: str, args: tuple[object, ...]) -> int:
        """One write statement, in the caller's transaction if one is open (else on its
        own, which SQLite makes atomic); returns the rows it changed."""
        with self.reading() as conn:
            return conn.execute(sql, args).rowcount

    # ------------------------------------------------------------------ bots

    def bots_changes(self) -> int:
        """How many writes ``ladder_bots`` has had (from any connection): one indexed
        read, for callers that keep the table in memory."""
        with self.reading() as conn:
            (changes,) = conn.execute("SELECT value FROM meta WHERE key = ?",
                                      (BOTS_CHANGES_KEY,)).fetchone()
        return int(changes)

    def _bots(self, where: str = "", args: tuple[object, ...] = ()) -> list[BotRow]:
        with self.reading() as conn:
            rows = conn.execute(f"SELECT {_BOT_COLUMNS} FROM ladder_bots {where} ORDER BY id",
                                args).fetchall()
        return [BotRow(*row) for row in rows]

    def bots(self) -> list[BotRow]:
        """Every bot version, in registration order."""
        return self._bots()

    def bot(self, name: str) -> BotRow | None:
        """The bot version called ``name``, or None."""
        found = self._bots("WHERE name = ?", (name,))
        return found[0] if found else None

    def versions(self, base: str) -> list[BotRow]:
        """Every version of the bot ``base``, oldest first."""
        return self._bots("WHERE base = ?", (base,))

    def bot_name(self, bot_id: int | None) -> str | None:
        """The name of the bot version ``bot_id`` (None for None or an unknown id)."""
        if bot_id is None:
            return None
        with self.reading() as conn:
            row = conn.execute("SELECT name FROM ladder_bots WHERE id = ?",
                               (bot_id,)).fetchone()
        return None if row is None else str(row[0])

    def add_bot(self, row: BotRow, key_id: str, salt: bytes, digest: bytes) -> bool:
        """Insert a bot version (``row.id`` is ignored) with its token's key id, salt and
        hash; False when its name or its (base, version) is taken."""
        with self.reading() as conn:
            try:
                conn.execute(
                    "INSERT INTO ladder_bots (name, base, version, previous_id, owner, "
                    "description, concurrency, key_id, token_salt, token_hash, created_at, "
                    "retired_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*row[1:8], key_id, salt, digest, row.created_at, row.retired_at))
            except sqlite3.IntegrityError:
                return False
        return True

    def set_token(self, bot_id: int, key_id: str, salt: bytes, digest: bytes) -> None:
        self._execute("UPDATE ladder_bots SET key_id = ?, token_salt = ?, token_hash = ? "
                      "WHERE id = ?", (key_id, salt, digest, bot_id))

    def set_retired(self, bot_id: int, at: str | None) -> None:
        self._execute("UPDATE ladder_bots SET retired_at = ? WHERE id = ?", (at, bot_id))

    def set_profile(self, bot_id: int, description: str, concurrency: int) -> None:
        self._execute("UPDATE ladder_bots SET description = ?, concurrency = ? "
                      "WHERE id = ?", (description, concurrency, bot_id))

    def credentials(self, key_id: str) -> tuple[str, bytes, bytes, str | None] | None:
        """``(name, token salt, token hash, retired_at)`` of the bot whose token has this
        key id, or None."""
        with self.reading() as conn:
            row = conn.execute("SELECT name, token_salt, token_hash, retired_at "
                               "FROM ladder_bots WHERE key_id = ?", (key_id,)).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3])

    # ------------------------------------------------------------------ benches

    def _bot_id(self, name: str) -> int | None:
        with self.reading() as conn:
            row = conn.execute("SELECT id FROM ladder_bots WHERE name = ?", (name,)).fetchone()
        return None if row is None else int(row[0])

    def benches(self, bot: str) -> list[BenchRow]:
        """Every bench of ``bot``, oldest first (none for an unknown name)."""
        with self.reading() as conn:
            rows = conn.execute(_BENCH_SELECT + " WHERE b.name = ? ORDER BY s.id",
                                (bot,)).fetchall()
        return [BenchRow(*row) for row in rows]

    def active_benches(self, now: float) -> list[BenchRow]:
        """Every bench not lifted and not over at ``now``, by bot name."""
        with self.reading() as conn:
            rows = conn.execute(_BENCH_SELECT + " WHERE s.lifted_at IS NULL AND s.until > ? "
                                "ORDER BY b.name, s.id", (now,)).fetchall()
        return [BenchRow(*row) for row in rows]

    def add_bench(self, bench: BenchRow) -> bool:
        """Store a bench (``lifted_at`` ignored); False when its bot is unknown."""
        bot_id = self._bot_id(bench.bot)
        if bot_id is None:
            return False
        self._execute("INSERT INTO ladder_benches (bot_id, started_at, until, repeat, "
                      "reason) VALUES (?, ?, ?, ?, ?)",
                      (bot_id, bench.started_at, bench.until, bench.repeat, bench.reason))
        return True

    def lift_benches(self, bot: str, now: float) -> None:
        """Lift ``bot``'s benches in force at ``now``."""
        self._execute("UPDATE ladder_benches SET lifted_at = ? WHERE lifted_at IS NULL "
                      "AND until > ? AND bot_id = (SELECT id FROM ladder_bots "
                      "WHERE name = ?)", (now, now, bot))

    # ------------------------------------------------------------------ deal sets

    def start_set(self, key: str, seed: int, base_json: str, status: str, at: str) -> None:
        self._execute("INSERT INTO ladder_sets (key, seed, base_json, status, started_at) "
                      "VALUES (?, ?, ?, ?, ?)", (key, seed, base_json, status, at))

    def finish_set(self, key: str, status: str, reason: str | None, at: str) -> None:
        self._execute("UPDATE ladder_sets SET status = ?, reason = ?, finished_at = ? "
                      "WHERE key = ?", (status, reason, at, key))

    def close_sets(self, status: str, new_status: str, reason: str, at: str) -> int:
        """End every set in ``status`` as ``new_status`` with ``reason``; how many."""
        return self._execute("UPDATE ladder_sets SET status = ?, reason = ?, finished_at = ? "
                             "WHERE status = ?", (new_status, reason, at, status))

    def sets_not_in(self, status: str, keys: Collection[str]) -> set[str]:
        """Those of the sets ``keys`` whose status is not ``status``."""
        wanted = sorted(set(keys))
        if not wanted:
            return set()
        with self.reading() as conn:
            rows = conn.execute(f"SELECT key FROM ladder_sets WHERE status != ? "
                                f"AND key IN ({','.join('?' * len(wanted))})",
                                (status, *wanted)).fetchall()
        return {k for (k,) in rows}

    def sets_state(self, status: str) -> tuple[int, int]:
        """``(sets started, sets now in status)``: two indexed reads that change whenever
        a set starts or leaves ``status``."""
        with self.reading() as conn:
            (started,) = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM ladder_sets"
                                      ).fetchone()
            (now,) = conn.execute("SELECT COUNT(*) FROM ladder_sets WHERE status = ?",
                                  (status,)).fetchone()
        return int(started), int(now)

    def sets(self) -> list[SetRow]:
        """Every deal set, by key."""
        with self.reading() as conn:
            rows = conn.execute("SELECT key, base_json, status, reason FROM ladder_sets "
                                "ORDER BY key").fetchall()
        return [SetRow(*row) for row in rows]

    # ------------------------------------------------------------------ rating history

    def add_snapshot(self, games: int, at: str, players_json: str) -> None:
        self._execute("INSERT INTO ladder_rating_history (games, at, players_json) "
                      "VALUES (?, ?, ?)", (games, at, players_json))

    def snapshots(self) -> list[tuple[int, str, str]]:
        """``(games, at, players_json)`` of every standings snapshot, oldest first."""
        with self.reading() as conn:
            rows = conn.execute("SELECT games, at, players_json FROM ladder_rating_history "
                                "ORDER BY id").fetchall()
        return [(int(g), str(at), str(p)) for g, at, p in rows]

    # ------------------------------------------------------------------ hosted bots

    def add_hosted(self, name: str, row: HostedRow, at: str) -> None:
        """Record the bot version ``name`` as hosted (``row.name`` is ignored)."""
        self._execute("INSERT INTO ladder_hosted (bot_id, sha256, root, runtime, command_json, "
                      "build_json, state, detail, updated_at) SELECT id, ?, ?, ?, ?, ?, ?, "
                      "?, ? FROM ladder_bots WHERE name = ?", (*row[1:], at, name))

    def hosted(self, name: str | None = None) -> list[HostedRow]:
        """The hosted version ``name`` (every one when None), in registration order."""
        where, args = ("WHERE b.name = ?", (name,)) if name is not None else ("", ())
        with self.reading() as conn:
            rows = conn.execute(f"{_HOSTED_SELECT} {where} ORDER BY b.id", args).fetchall()
        return [HostedRow(*row) for row in rows]

    def hosted_states(self) -> dict[str, str]:
        """Hosted version name -> its build state."""
        with self.reading() as conn:
            return dict(conn.execute("SELECT b.name, h.state FROM ladder_hosted h "
                                     "JOIN ladder_bots b ON b.id = h.bot_id").fetchall())

    def set_hosted_state(self, name: str, state: str, detail: str, at: str) -> None:
        self._execute("UPDATE ladder_hosted SET state = ?, detail = ?, updated_at = ? "
                      "WHERE bot_id = (SELECT id FROM ladder_bots WHERE name = ?)",
                      (state, detail, at, name))
