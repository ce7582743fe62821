"""Where submitted bots are kept: content-addressed files next to the ladder's store,
and a row per hosted version in the store.

Files, under ``<store folder>/uploads/``::

    sha256/<hex>/bundle         the archive as received
    sha256/<hex>/files/         what it unpacked to (checked: see harness.ladder.bundle)
    builds/<version>/work/      a hosted version's copy of the files, where its build ran
    builds/<version>/build.log  its build's output
    tmp/                        uploads being received, and builds being made

An upload is received into a new folder of ``tmp/``, checked (size, sha256, archive,
manifest) and then moved into ``sha256/`` with one ``os.replace``; only after that is
the version recorded in the store. So a ladder killed (even by SIGKILL) mid-upload leaves
only a folder in ``tmp/``, and one killed between the move and the record leaves a
bundle no version refers to: :meth:`Uploads.sweep`, run when the ladder starts, removes
both. A bundle submitted twice is stored once.

The store's ``ladder_hosted`` table holds, per hosted version: the bundle's sha256, its
manifest and its build state (``building``, ``ready`` or ``build failed``, with a
one-line reason).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from harness.errors import BundleError, BundleTooLarge
from harness.ladder.bundle import Manifest, UnpackLimits, bundle_root, read_manifest, unpack
from harness.ladder.store import LadderStore

__all__ = ["BUILDING", "BUILD_FAILED", "DEFAULT_MAX_BYTES", "READY", "Hosted", "Receiving",
           "Stored", "Uploads"]

BUILDING: Final = "building"
READY: Final = "ready"
BUILD_FAILED: Final = "build failed"
DEFAULT_MAX_BYTES: Final = 50 << 20
"""The largest bundle a ladder accepts unless configured otherwise (50 MiB)."""

_HEX = re.compile(r"[0-9a-f]{64}")
_LOG_TAIL: Final = 256 << 10


@dataclass(frozen=True, slots=True)
class Stored:
    """A bundle in the store's folder: its sha256, the folder of its files that holds
    bot.toml (relative to the bundle's ``files``), and its manifest."""

    sha256: str
    root: str
    manifest: Manifest


@dataclass(frozen=True, slots=True)
class Hosted:
    """A hosted bot version as recorded."""

    name: str
    sha256: str
    root: str
    manifest: Manifest
    state: str
    detail: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _folder_name(name: str) -> str:
    return name.replace("@", "_v")


class Receiving:
    """One upload being received into a folder of ``tmp/``: :meth:`write` each chunk,
    then :meth:`finish`; :meth:`discard` (always call it) removes whatever is left."""

    def __init__(self, uploads: Uploads, fmt: str, size: int, sha256: str) -> None:
        self.uploads = uploads
        self.fmt = fmt
        self.size = size
        self.sha256 = sha256
        self.folder = uploads.tmp / secrets.token_hex(8)
        self.folder.mkdir(parents=True)
        self._file = (self.folder / "bundle").open("xb")
        self._hash = hashlib.sha256()
        self.received = 0

    def write(self, chunk: bytes) -> None:
        """Append ``chunk``; BundleTooLarge past the declared size or the cap."""
        self.received += len(chunk)
        if self.received > self.uploads.max_bytes:
            raise BundleTooLarge(f"the bundle is over this ladder's cap of "
                                 f"{self.uploads.max_bytes} bytes")
        if self.received > self.size:
            raise BundleError(f"the bundle is longer than the {self.size} bytes its header "
                              f"declared")
        self._hash.update(chunk)
        self._file.write(chunk)

    def finish(self) -> Stored:
        """Check the whole bundle, unpack it, read its manifest and move it into place.
        BundleError says why it is refused. Blocking: call it in a thread."""
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        if self.received != self.size:
            raise BundleError(f"the bundle ended after {self.received} bytes; its header "
                              f"declared {self.size}")
        got = self._hash.hexdigest()
        if got != self.sha256:
            raise BundleError(f"sha256 mismatch: the bytes received hash to {got}, the "
                              f"header says {self.sha256}")
        files = self.folder / "files"
        files.mkdir()
        unpack(self.folder / "bundle", self.fmt, files, self.uploads.limits)
        root = bundle_root(files)
        manifest = read_manifest(root)
        final = self.uploads.content(got)
        final.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(self.folder, final)
        except OSError:
            if not (final / "files").is_dir():  # not the same bundle stored just before
                raise
        return Stored(got, root.relative_to(files).as_posix(), manifest)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Uploads:
    """The hosted bots' files and rows of one ladder."""

    def __init__(self, store: LadderStore, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 limits: UnpackLimits | None = None) -> None:
        self.store = store
        self.folder = store.path.parent / "uploads"
        self.tmp = self.folder / "tmp"
        self.max_bytes = max_bytes
        self.limits = limits or UnpackLimits(max_bytes=10 * max_bytes)

    def content(self, sha256: str) -> Path:
        """The folder of a stored bundle (``bundle`` and ``files``)."""
        if not _HEX.fullmatch(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.folder / "sha256" / sha256

    def files(self, hosted: Hosted) -> Path:
        """The folder of a hosted version's files that holds its bot.toml."""
        return self.content(hosted.sha256) / "files" / hosted.root

    def build_folder(self, name: str) -> Path:
        """Where a hosted version's build runs and its log is kept."""
        return self.folder / "builds" / _folder_name(name)

    def build_log(self, name: str) -> Path:
        return self.build_folder(name) / "build.log"

    # ------------------------------------------------------------------ receiving

    def receive(self, fmt: str, size: int, sha256: str) -> Receiving:
        """Start receiving a bundle of ``size`` bytes; BundleTooLarge over the cap."""
        if size > self.max_bytes:
            raise BundleTooLarge(f"the bundle is {size} bytes, over this ladder's cap of "
                                 f"{self.max_bytes} bytes")
        if not _HEX.fullmatch(sha256):
            raise BundleError(f"the header's sha256 must be 64 lowercase hex digits; got "
                              f"{sha256!r}")
        return Receiving(self, fmt, size, sha256)

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

    def read_log(self, name: str) -> str:
        """The end of a version's build log (empty if it has none)."""
        path = self.build_log(name)
        try:
            with path.open("rb") as f:
                f.seek(max(0, path.stat().st_size - _LOG_TAIL))
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ start-up

    def sweep(self) -> list[Path]:
        """Remove what a killed ladder left: uploads and builds in ``tmp/``, bundles no
        version refers to. Call it only while no upload runs (the ladder's start).
        Returns what it removed."""
        referred = {h.sha256 for h in self.all()}
        removed = []
        if self.tmp.is_dir():
            removed += list(self.tmp.iterdir())
        content = self.folder / "sha256"
        if content.is_dir():
            removed += [p for p in content.iterdir() if p.name not in referred]
        for path in removed:
            shutil.rmtree(path, ignore_errors=True)
        return removed
