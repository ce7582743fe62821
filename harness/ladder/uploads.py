"""Where submitted bots are kept: content-addressed files next to the ladder's store,
and a row per hosted version in the store.

The files (bundles, builds) are kept as :mod:`harness.hosting.files` says, under
``<store folder>/uploads/``; :meth:`Uploads.sweep`, run when the ladder starts, removes
what a killed ladder left.

The store's ``ladder_hosted`` table holds, per hosted version: the bundle's sha256, its
manifest and its build state (``building``, ``ready`` or ``build failed``, with a
one-line reason).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from harness.hosting.bundle import Manifest, UnpackLimits
from harness.hosting.files import (
    BUILD_FAILED,
    BUILDING,
    DEFAULT_MAX_BYTES,
    READY,
    BundleFiles,
    Hosted,
    Receiving,
    Stored,
)
from harness.storage.ladder import LadderStore

__all__ = ["BUILDING", "BUILD_FAILED", "DEFAULT_MAX_BYTES", "READY", "Hosted", "Receiving",
           "Stored", "Uploads"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Uploads(BundleFiles):
    """The hosted bots' files and rows of one ladder."""

    def __init__(self, store: LadderStore, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 limits: UnpackLimits | None = None) -> None:
        super().__init__(store.path.parent / "uploads", max_bytes=max_bytes, limits=limits)
        self.store = store

    def recorder(self, stored: Stored) -> Callable[[sqlite3.Connection, str], None]:
        """What records a new version ``name`` as hosted with ``stored``, inside the
        registry's transaction that registers it."""
        state = BUILDING if stored.manifest.build else READY

        def record(conn: sqlite3.Connection, name: str) -> None:
            conn.execute(
                "INSERT INTO ladder_hosted (bot_id, sha256, root, runtime, command_json, "
                "build_json, state, detail, updated_at) SELECT id, ?, ?, ?, ?, ?, ?, '', ? "
                "FROM ladder_bots WHERE name = ?",
                (stored.sha256, stored.root, stored.manifest.runtime,
                 json.dumps(stored.manifest.command), json.dumps(stored.manifest.build),
                 state, _now(), name))

        return record

    # ------------------------------------------------------------------ reading

    _SELECT: Final = ("SELECT b.name, h.sha256, h.root, h.runtime, h.command_json, "
                      "h.build_json, h.state, h.detail FROM ladder_hosted h "
                      "JOIN ladder_bots b ON b.id = h.bot_id")

    @staticmethod
    def _hosted(row: tuple[str, ...]) -> Hosted:
        manifest = Manifest(row[3], tuple(json.loads(row[4])), tuple(json.loads(row[5])))
        return Hosted(name=row[0], sha256=row[1], root=row[2], manifest=manifest,
                      state=row[6], detail=row[7])

    def get(self, name: str) -> Hosted | None:
        """The hosted version ``name``, or None (not hosted, or no such bot)."""
        with self.store.reading() as conn:
            row = conn.execute(self._SELECT + " WHERE b.name = ?", (name,)).fetchone()
        return None if row is None else self._hosted(row)

    def all(self) -> list[Hosted]:
        """Every hosted version, in registration order."""
        with self.store.reading() as conn:
            rows = conn.execute(self._SELECT + " ORDER BY b.id").fetchall()
        return [self._hosted(r) for r in rows]

    def states(self) -> dict[str, str]:
        """Hosted version name -> its build state."""
        with self.store.reading() as conn:
            return dict(conn.execute("SELECT b.name, h.state FROM ladder_hosted h "
                                     "JOIN ladder_bots b ON b.id = h.bot_id").fetchall())

    def set_state(self, name: str, state: str, detail: str = "") -> None:
        with self.store.writing() as conn:
            conn.execute("UPDATE ladder_hosted SET state = ?, detail = ?, updated_at = ? "
                         "WHERE bot_id = (SELECT id FROM ladder_bots WHERE name = ?)",
                         (state, detail, _now(), name))

    # ------------------------------------------------------------------ start-up

    def sweep(self) -> list[Path]:
        """Remove what a killed ladder left: uploads and builds in ``tmp/``, bundles no
        version refers to. Call it only while no upload runs (the ladder's start).
        Returns what it removed."""
        return self.sweep_except(h.sha256 for h in self.all())
