"""The results store: tournaments and their finished games, in one SQLite file.

A tournament runner calls :meth:`ResultsStore.ensure_tournament`, asks
:meth:`ResultsStore.finished_keys` which games it can skip, and calls
:meth:`ResultsStore.record_game` the moment each game ends. Recording is idempotent on
``(tournament_id, game_key)``: the game row and its faults go in one transaction, so a
process killed at any instant leaves either the whole game or nothing, and recording the
same key again stores nothing and returns ``False``.

The file uses WAL journaling, so another process may read it while it is being written.
One connection is shared by all threads of a process and guarded by a lock.

Schema changes are a list of migration steps: ``_MIGRATIONS[i]`` brings a file from
version ``i`` to ``i + 1``. To add a version, append one function; the version number
follows from the list's length. Version 2 indexes a tournament's games in stored order
and keeps who sat in each game (``game_seats``), so :meth:`ResultsStore.latest_games`
reads only the games it returns.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, TypeVar

from harness.errors import StoreError
from harness.referee.outcome import Fault, FaultKind, Termination
from harness.storage.sqlite import SQLiteFile

__all__ = ["GameRow", "ResultsStore"]

_PAGE_SIZE: Final = 500
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


@dataclass(frozen=True)
class GameRow:
    """A finished game: what the runner records and what reads return. The termination
    and the fault kinds are stored as their enum values and read back as enums
    (:func:`harness.results.rows.to_row` builds a row from a played game)."""

    tournament_id: str
    game_key: str
    form: str
    seed: int
    seats: tuple[str, ...]
    termination: Termination
    scores: tuple[int, ...]
    ranking: tuple[int, ...]
    hands: int
    started_at: str
    finished_at: str
    duration_s: float
    record: Mapping[str, Any]
    faults: tuple[Fault, ...] = ()


# --------------------------------------------------------------------------- schema


def _migrate_to_v1(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE tournaments (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            config_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY,
            tournament_id TEXT NOT NULL REFERENCES tournaments(id),
            game_key TEXT NOT NULL,
            form TEXT NOT NULL,
            seed INTEGER NOT NULL,
            seats_json TEXT NOT NULL,
            termination TEXT NOT NULL,
            scores_json TEXT NOT NULL,
            ranking_json TEXT NOT NULL,
            hands INTEGER NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            duration_s REAL NOT NULL,
            record_json TEXT NOT NULL,
            UNIQUE (tournament_id, game_key)
        )"""
    )
    conn.execute("CREATE INDEX games_by_key ON games(game_key)")
    conn.execute(
        """CREATE TABLE faults (
            id INTEGER PRIMARY KEY,
            game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            bot TEXT NOT NULL,
            kind TEXT NOT NULL,
            detail TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX faults_by_game ON faults(game_id)")
    conn.execute("CREATE INDEX faults_by_bot_kind ON faults(bot, kind)")


def _migrate_to_v2(conn: sqlite3.Connection) -> None:
    """The games of a tournament in stored order, and who sat in each game (one row per
    seat, so a game is found by a bot's exact name), filled in for the stored games."""
    conn.execute("CREATE INDEX games_by_tournament ON games(tournament_id, id)")
    conn.execute(
        """CREATE TABLE game_seats (
            game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            bot TEXT NOT NULL,
            PRIMARY KEY (game_id, seat)
        ) WITHOUT ROWID"""
    )
    conn.execute("CREATE INDEX game_seats_by_bot ON game_seats(bot, game_id)")
    for game_id, seats_json in conn.execute("SELECT id, seats_json FROM games").fetchall():
        conn.executemany("INSERT INTO game_seats (game_id, seat, bot) VALUES (?, ?, ?)",
                         _seat_rows(game_id, json.loads(seats_json)))


# _MIGRATIONS[i] upgrades a file at schema version i to version i + 1, inside the caller's
# transaction. Never edit a released step; append a new one.
_MIGRATIONS: Final[tuple[Callable[[sqlite3.Connection], None], ...]] = (
    _migrate_to_v1, _migrate_to_v2)


# --------------------------------------------------------------------------- helpers


def _dumps(value: Any, *, sort_keys: bool = False) -> str:
    return json.dumps(
        value, separators=(",", ":"), sort_keys=sort_keys, ensure_ascii=False, allow_nan=False
    )


def _seat_rows(game_id: int | None, seats: Iterable[str]) -> list[tuple[Any, ...]]:
    """The ``game_seats`` rows ``(game_id, seat, bot)`` of one game."""
    return [(game_id, seat, bot) for seat, bot in enumerate(seats)]



def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _game_to_json(game: GameRow) -> dict[str, Any]:
    return {
        "tournament_id": game.tournament_id,
        "game_key": game.game_key,
        "form": game.form,
        "seed": game.seed,
        "seats": list(game.seats),
        "termination": game.termination.value,
        "scores": list(game.scores),
        "ranking": list(game.ranking),
        "hands": game.hands,
        "started_at": game.started_at,
        "finished_at": game.finished_at,
        "duration_s": game.duration_s,
        "faults": [
            {"seat": f.seat, "bot": f.bot, "kind": f.kind.value, "detail": f.detail}
            for f in game.faults
        ],
        "record": dict(game.record),
    }


_GAME_COLUMNS: Final = (
    "id, tournament_id, game_key, form, seed, seats_json, termination, scores_json, "
    "ranking_json, hands, started_at, finished_at, duration_s, record_json"
)


_Outcome = TypeVar("_Outcome", Termination, FaultKind)


def _enum_value(kind: type[_Outcome], value: str, game_key: str) -> _Outcome:
    try:
        return kind(value)
    except ValueError:
        raise StoreError(f"game {game_key!r}: unknown {kind.__name__} {value!r} in the "
                         "store") from None


def _row_to_game(row: tuple[Any, ...], stored: tuple[tuple[Any, ...], ...]) -> GameRow:
    """A game row from its columns and its fault rows ``(seat, bot, kind, detail)``. The
    faults' hand, decision and log tail come from the record's copy of the faults when it
    has one per stored fault (the faults table does not keep them)."""
    record: dict[str, Any] = json.loads(row[13])
    listed = record.get("faults")
    if not (isinstance(listed, list) and len(listed) == len(stored)):
        listed = [{}] * len(stored)
    faults = tuple(
        Fault(seat, bot, _enum_value(FaultKind, kind, row[2]), detail,
              where.get("hand", 0), where.get("decision", 0), where.get("log_tail", ""))
        for (seat, bot, kind, detail), where in zip(stored, listed, strict=True)
    )
    return GameRow(
        tournament_id=row[1],
        game_key=row[2],
        form=row[3],
        seed=row[4],
        seats=tuple(json.loads(row[5])),
        termination=_enum_value(Termination, row[6], row[2]),
        scores=tuple(json.loads(row[7])),
        ranking=tuple(json.loads(row[8])),
        hands=row[9],
        started_at=row[10],
        finished_at=row[11],
        duration_s=row[12],
        record=record,
        faults=faults,
    )


# --------------------------------------------------------------------------- store


class ResultsStore(SQLiteFile):
    """A results file. Thread-safe; usable as a context manager."""

    KIND = "results store"
    VERSION_KEY = "schema_version"
    MIGRATIONS = _MIGRATIONS

    # ---------------------------------------------------------------- schema

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def _unusable(self, exc: sqlite3.DatabaseError) -> str:
        return (f"{self.path} is not a usable results store (not an SQLite database, "
                f"or corrupt): {exc}")

    def _version(self, conn: sqlite3.Connection) -> int | None:
        """The file's schema version; ``None`` for an empty file. Raises if unusable."""
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%'"
            )
        }
        if not tables:
            return None
        if "meta" not in tables:
            raise StoreError(
                f"{self.path} is an SQLite database but not a results store (it has no "
                f"'meta' table; tables: {', '.join(sorted(tables))}); choose another path"
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0]) if row is not None else -1
        except ValueError:
            version = -1
        if version < 0:
            raise StoreError(f"{self.path}: the meta table has no valid schema_version")
        self._newer(version)
        return version

    # ---------------------------------------------------------------- tournaments

    def ensure_tournament(self, tournament_id: str, name: str, config: Mapping[str, Any]) -> bool:
        """Create the tournament (``True``), or return ``False`` if it already exists with
        the same configuration. A different configuration raises :class:`StoreError`."""
        try:
            config_json = _dumps(dict(config), sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"tournament config is not JSON-serialisable: {exc}") from exc
        with self.writing() as conn:
            row = conn.execute(
                "SELECT config_json FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO tournaments (id, name, config_json, created_at, status) "
                    "VALUES (?, ?, ?, ?, 'running')",
                    (tournament_id, name, config_json, _utc_now()),
                )
                return True
        if row[0] != config_json:
            stored: dict[str, Any] = json.loads(row[0])
            new: dict[str, Any] = json.loads(config_json)
            changed = sorted(k for k in stored.keys() | new.keys() if stored.get(k) != new.get(k))
            raise StoreError(
                f"tournament {tournament_id!r} already exists in {self.path} with a different "
                f"configuration (differs in: {', '.join(changed) or 'value types'}); "
                "pick a new tournament id or output folder to start afresh, or rerun with "
                "the original configuration to resume"
            )
        return False

    def replace_tournament_config(self, tournament_id: str, config: Mapping[str, Any]) -> None:
        """Store a new configuration for an existing tournament (used to extend one:
        the caller checks that its games so far stay valid)."""
        try:
            config_json = _dumps(dict(config), sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"tournament config is not JSON-serialisable: {exc}") from exc
        with self.writing() as conn:
            cursor = conn.execute("UPDATE tournaments SET config_json = ? WHERE id = ?",
                                  (config_json, tournament_id))
            if cursor.rowcount == 0:
                raise StoreError(f"unknown tournament {tournament_id!r} in {self.path}")

    def set_status(self, tournament_id: str, status: str) -> None:
        """Set a tournament's status (``"running"``, ``"finished"``, ``"interrupted"``,
        ``"cancelled"`` or ``"failed"``)."""
        with self.writing() as conn:
            cursor = conn.execute(
                "UPDATE tournaments SET status = ? WHERE id = ?", (status, tournament_id)
            )
            if cursor.rowcount == 0:
                raise StoreError(f"unknown tournament {tournament_id!r} in {self.path}")

    def delete_tournament(self, tournament_id: str) -> int:
        """Delete a tournament with its games and their faults; returns how many games."""
        with self.writing() as conn:
            deleted = conn.execute(
                "DELETE FROM games WHERE tournament_id = ?", (tournament_id,)
            ).rowcount
            conn.execute("DELETE FROM tournaments WHERE id = ?", (tournament_id,))
        return int(deleted)

    def tournament_ids(self) -> list[str]:
        """Every tournament id, oldest first."""
        with self.reading() as conn:
            return [r[0] for r in conn.execute("SELECT id FROM tournaments ORDER BY rowid")]

    def tournament_status(self, tournament_id: str) -> str:
        """The tournament's status; unknown ids raise :class:`StoreError`."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT status FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
        if row is None:
            raise StoreError(f"unknown tournament {tournament_id!r} in {self.path}")
        status: str = row[0]
        return status

    def tournament_summaries(self) -> list[tuple[str, str, str, int]]:
        """``(id, name, status, stored games)`` of every tournament, oldest first."""
        with self.reading() as conn:
            return [
                (r[0], r[1], r[2], r[3])
                for r in conn.execute(
                    "SELECT t.id, t.name, t.status, COUNT(g.id) FROM tournaments AS t "
                    "LEFT JOIN games AS g ON g.tournament_id = t.id "
                    "GROUP BY t.id ORDER BY t.rowid"
                )
            ]

    def tournament_config(self, tournament_id: str) -> dict[str, Any]:
        """The configuration the tournament was created with."""
        with self.reading() as conn:
            row = conn.execute(
                "SELECT config_json FROM tournaments WHERE id = ?", (tournament_id,)
            ).fetchone()
        if row is None:
            raise StoreError(f"unknown tournament {tournament_id!r} in {self.path}")
        config: dict[str, Any] = json.loads(row[0])
        return config

    # ---------------------------------------------------------------- games

    def finished_keys(self, tournament_id: str) -> set[str]:
        """The game keys already stored for the tournament (empty if it is unknown)."""
        with self.reading() as conn:
            return {
                r[0]
                for r in conn.execute(
                    "SELECT game_key FROM games WHERE tournament_id = ?", (tournament_id,)
                )
            }

    def count_games(self, tournament_id: str) -> int:
        """How many games of the tournament are stored (0 if it is unknown)."""
        with self.reading() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM games WHERE tournament_id = ?",
                                    (tournament_id,)).fetchone()[0])

    def count_keys(self, tournament_id: str, prefixes: Iterable[str]) -> dict[str, int]:
        """How many of the tournament's stored game keys start with each prefix (a range
        scan of the key index each, not a read of every key)."""
        with self.reading() as conn:
            return {p: int(conn.execute(
                "SELECT COUNT(*) FROM games WHERE tournament_id = ? AND game_key >= ? "
                "AND game_key < ?", (tournament_id, p, p[:-1] + chr(ord(p[-1]) + 1)),
            ).fetchone()[0]) for p in set(prefixes) if p}

    def record_game(self, game: GameRow) -> bool:
        """Store a finished game and its faults atomically. Returns ``True`` if stored,
        ``False`` if a game with the same tournament and key was already there (the
        stored one is left untouched)."""
        if not _INT64_MIN <= game.seed <= _INT64_MAX:
            raise StoreError(f"game {game.game_key!r}: seed {game.seed} does not fit 64 bits")
        try:
            values = (
                game.tournament_id,
                game.game_key,
                game.form,
                game.seed,
                _dumps(list(game.seats)),
                game.termination.value,
                _dumps(list(game.scores)),
                _dumps(list(game.ranking)),
                game.hands,
                game.started_at,
                game.finished_at,
                float(game.duration_s),
                _dumps(dict(game.record)),
            )
        except (TypeError, ValueError) as exc:
            raise StoreError(f"game {game.game_key!r} is not JSON-serialisable: {exc}") from exc
        with self.writing() as conn:
            if conn.execute(
                "SELECT 1 FROM tournaments WHERE id = ?", (game.tournament_id,)
            ).fetchone() is None:
                raise StoreError(
                    f"unknown tournament {game.tournament_id!r}; call ensure_tournament first"
                )
            cursor = conn.execute(
                f"INSERT INTO games ({_GAME_COLUMNS.removeprefix('id, ')}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tournament_id, game_key) DO NOTHING",
                values,
            )
            if cursor.rowcount != 1:
                return False
            game_id = cursor.lastrowid
            conn.executemany("INSERT INTO game_seats (game_id, seat, bot) VALUES (?, ?, ?)",
                             _seat_rows(game_id, game.seats))
            conn.executemany(
                "INSERT INTO faults (game_id, seat, bot, kind, detail) VALUES (?, ?, ?, ?, ?)",
                [(game_id, f.seat, f.bot, f.kind.value, f.detail) for f in game.faults],
            )
            return True

    def games(self, tournament_id: str | None = None) -> Iterator[GameRow]:
        """Stored games, oldest first, of one tournament or of all. Reads in pages, so the
        store stays usable (and writable) between items."""
        last_id = 0
        while True:
            with self.reading() as conn:
                if tournament_id is None:
                    rows = conn.execute(
                        f"SELECT {_GAME_COLUMNS} FROM games WHERE id > ? ORDER BY id LIMIT ?",
                        (last_id, _PAGE_SIZE),
                    ).fetchall()
                else:
                    rows = conn.execute(
                        f"SELECT {_GAME_COLUMNS} FROM games WHERE tournament_id = ? AND id > ? "
                        "ORDER BY id LIMIT ?",
                        (tournament_id, last_id, _PAGE_SIZE),
                    ).fetchall()
                if not rows:
                    return
                faults = self._faults_for(conn, [r[0] for r in rows])
            for row in rows:
                yield _row_to_game(row, faults.get(row[0], ()))
            last_id = rows[-1][0]

    def last_game_id(self, tournament_id: str) -> int:
        """The id of the tournament's most recently stored game (0 before any): one
        indexed read, for callers that cache what they drew from the latest games."""
        with self.reading() as conn:
            row = conn.execute("SELECT MAX(id) FROM games WHERE tournament_id = ?",
                               (tournament_id,)).fetchone()
        return int(row[0] or 0)

    def latest_games(self, tournament_id: str, limit: int, *,
                     bot: str | None = None) -> list[GameRow]:
        """The tournament's ``limit`` most recently stored games, newest first; with
        ``bot``, only the games in which a seat holds exactly that name (``bot`` is not
        ``bot@2`` or ``bot2``). Reads only the games it returns."""
        if limit <= 0:
            return []
        with self.reading() as conn:
            if bot is None:
                rows = conn.execute(
                    f"SELECT {_GAME_COLUMNS} FROM games WHERE tournament_id = ? "
                    "ORDER BY id DESC LIMIT ?", (tournament_id, limit)).fetchall()
            else:
                # Walks the bot's seats newest first and stops at the limit: its cost does
                # not grow with the games stored.
                rows = conn.execute(
                    f"SELECT {_GAME_COLUMNS} FROM games WHERE id IN ("
                    "SELECT DISTINCT s.game_id FROM game_seats AS s "
                    "JOIN games AS g ON g.id = s.game_id "
                    "WHERE s.bot = ? AND g.tournament_id = ? "
                    "ORDER BY s.game_id DESC LIMIT ?) ORDER BY id DESC",
                    (bot, tournament_id, limit)).fetchall()
            if not rows:
                return []
            faults = self._faults_of(conn, [r[0] for r in rows])
        return [_row_to_game(row, faults.get(row[0], ())) for row in rows]

    def game(self, tournament_id: str, game_key: str) -> GameRow | None:
        """One stored game, or ``None``."""
        with self.reading() as conn:
            row = conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE tournament_id = ? AND game_key = ?",
                (tournament_id, game_key),
            ).fetchone()
            if row is None:
                return None
            return _row_to_game(row, self._faults_for(conn, [row[0]]).get(row[0], ()))

    def find_game(self, ref: str) -> GameRow | None:
        """Look a game up by ``"<row id>"``, ``"<tournament>/<game_key>"`` or a bare
        ``game_key``. A row id wins if it exists; otherwise a reference that names more
        than one game raises :class:`StoreError` listing them. ``None`` if nothing matches."""
        with self.reading() as conn:
            if ref.isdigit():
                row = conn.execute(
                    f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (int(ref),)
                ).fetchone()
                if row is not None:
                    return _row_to_game(row, self._faults_for(conn, [row[0]]).get(row[0], ()))
            matches: dict[int, tuple[Any, ...]] = {}
            for row in conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE game_key = ?", (ref,)
            ):
                matches[row[0]] = row
            # Both ids and keys may contain "/", so try every split point.
            for i, char in enumerate(ref):
                if char == "/":
                    row = conn.execute(
                        f"SELECT {_GAME_COLUMNS} FROM games "
                        "WHERE tournament_id = ? AND game_key = ?",
                        (ref[:i], ref[i + 1 :]),
                    ).fetchone()
                    if row is not None:
                        matches[row[0]] = row
            if not matches:
                return None
            if len(matches) > 1:
                names = ", ".join(f"{r[1]}/{r[2]}" for r in sorted(matches.values()))
                raise StoreError(f"game reference {ref!r} is ambiguous; it matches {names}")
            (row,) = matches.values()
            return _row_to_game(row, self._faults_for(conn, [row[0]]).get(row[0], ()))

    @staticmethod
    def _faults_for(
        conn: sqlite3.Connection, game_ids: list[int]
    ) -> dict[int, tuple[tuple[Any, ...], ...]]:
        """Fault rows ``(seat, bot, kind, detail)`` of the games whose ids lie in
        ``[min(game_ids), max(game_ids)]``."""
        grouped: dict[int, list[tuple[Any, ...]]] = {}
        for game_id, *fault in conn.execute(
            "SELECT game_id, seat, bot, kind, detail FROM faults "
            "WHERE game_id BETWEEN ? AND ? ORDER BY id",
            (min(game_ids), max(game_ids)),
        ):
            grouped.setdefault(game_id, []).append(tuple(fault))
        return {k: tuple(v) for k, v in grouped.items()}

    @staticmethod
    def _faults_of(
        conn: sqlite3.Connection, game_ids: list[int]
    ) -> dict[int, tuple[tuple[Any, ...], ...]]:
        """Fault rows ``(seat, bot, kind, detail)`` of exactly these games (which may lie
        far apart), read :data:`_PAGE_SIZE` games at a time."""
        grouped: dict[int, list[tuple[Any, ...]]] = {}
        for start in range(0, len(game_ids), _PAGE_SIZE):
            page = game_ids[start:start + _PAGE_SIZE]
            for game_id, *fault in conn.execute(
                "SELECT game_id, seat, bot, kind, detail FROM faults "
                f"WHERE game_id IN ({', '.join('?' * len(page))}) ORDER BY id", page,
            ):
                grouped.setdefault(game_id, []).append(tuple(fault))
        return {k: tuple(v) for k, v in grouped.items()}

    def export_jsonl(
        self, path: str | os.PathLike[str], tournament_id: str | None = None
    ) -> int:
        """Write one JSON object per game (every :class:`GameRow` field, faults as objects)
        to ``path``, replacing it atomically. Returns the number of games written."""
        target = Path(path)
        partial = target.with_name(target.name + ".partial")
        count = 0
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("w", encoding="utf-8", newline="\n") as out:
                for game in self.games(tournament_id):
                    out.write(_dumps(_game_to_json(game)))
                    out.write("\n")
                    count += 1
            os.replace(partial, target)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise StoreError(f"cannot export games to {target}: {exc}") from exc
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return count
