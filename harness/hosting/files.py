"""Where submitted bots are kept: content-addressed files next to a referee's results.

Files, under the uploads folder (``<store folder>/uploads/`` of a ladder,
``<output>/.uploads/`` of ``serve``)::

    sha256/<hex>/bundle         the archive as received
    sha256/<hex>/files/         what it unpacked to (checked: see harness.hosting.bundle)
    builds/<version>/           a hosted version's build: build.log, out/, run/
    tmp/                        uploads being received, and builds being made

An upload is received into a new folder of ``tmp/``, checked (size, sha256, archive,
manifest) and then moved into ``sha256/`` with one ``os.replace``; only after that is
the version recorded. So a referee killed (even by SIGKILL) mid-upload leaves only a
folder in ``tmp/``, and one killed between the move and the record leaves a bundle no
version refers to: :meth:`BundleFiles.sweep`, run at start, removes both. A bundle
submitted twice is stored once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.errors import BundleError, BundleTooLarge, UploadLimit
from harness.hosting.bundle import Manifest, UnpackLimits, bundle_root, read_manifest, unpack
from harness.sandbox.scratch import unmount_under

__all__ = ["BUILDING", "BUILD_FAILED", "DEFAULT_DISK_RESERVE", "DEFAULT_MAX_BYTES", "READY",
           "BundleFiles", "Hosted", "Receiving", "Stored", "receive_bundle"]

BUILDING: Final = "building"
READY: Final = "ready"
BUILD_FAILED: Final = "build failed"
DEFAULT_MAX_BYTES: Final = 50 << 20
"""The largest bundle a referee accepts unless configured otherwise (50 MiB)."""
DEFAULT_DISK_RESERVE: Final = 1 << 30
"""The free disk an upload must leave unless configured otherwise (1 GiB): the results
store shares the disk, and uploads never take the room its games need."""

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


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MiB"


def _folder_name(name: str) -> str:
    return name.replace("@", "_v")


class Receiving:
    """One upload being received into a folder of ``tmp/``: :meth:`write` each chunk,
    then :meth:`finish`; :meth:`discard` (always call it) removes whatever is left."""

    def __init__(self, uploads: BundleFiles, fmt: str, size: int, sha256: str) -> None:
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
            raise BundleTooLarge(f"the bundle is over this referee's cap of "
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


class BundleFiles:
    """The bundles and builds of one uploads folder."""

    def __init__(self, folder: Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 limits: UnpackLimits | None = None,
                 disk_reserve: int = DEFAULT_DISK_RESERVE) -> None:
        self.folder = folder
        self.tmp = self.folder / "tmp"
        self.max_bytes = max_bytes
        self.limits = limits or UnpackLimits(max_bytes=10 * max_bytes)
        self.disk_reserve = disk_reserve

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

    def receive(self, fmt: str, size: int, sha256: str) -> Receiving:
        """Start receiving a bundle of ``size`` bytes; BundleTooLarge over the cap,
        UploadLimit when it could leave less free disk than the reserve."""
        if size > self.max_bytes:
            raise BundleTooLarge(f"the bundle is {size} bytes, over this referee's cap of "
                                 f"{self.max_bytes} bytes")
        if not _HEX.fullmatch(sha256):
            raise BundleError(f"the header's sha256 must be 64 lowercase hex digits; got "
                              f"{sha256!r}")
        self.check_room(size)
        return Receiving(self, fmt, size, sha256)

    def check_room(self, size: int) -> None:
        """UploadLimit unless the disk holds a bundle of ``size`` bytes, the most it may
        unpack to, and the reserve besides (checked before anything is received)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.folder).free
        needed = size + self.limits.max_bytes + self.disk_reserve
        if free < needed:
            raise UploadLimit(f"this referee is low on disk: {_mib(free)} free, and an "
                              f"upload must leave {_mib(self.disk_reserve)} for results "
                              f"after its bundle ({_mib(size)}) and the most it may unpack "
                              f"to ({_mib(self.limits.max_bytes)}); ask the operator")

    def check_build_room(self, output: int) -> None:
        """UploadLimit unless the disk holds a build's output of at most ``output`` bytes
        and the reserve besides (checked before the build runs)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(self.folder).free
        if free < output + self.disk_reserve:
            raise UploadLimit(f"this referee was low on disk: {_mib(free)} free, and a "
                              f"build must leave {_mib(self.disk_reserve)} for results "
                              f"after the most its output may take ({_mib(output)}); "
                              f"submit it again later, or ask the operator")

    def read_log(self, name: str) -> str:
        """The end of a version's build log (empty if it has none)."""
        path = self.build_log(name)
        try:
            with path.open("rb") as f:
                f.seek(max(0, path.stat().st_size - _LOG_TAIL))
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def sweep_except(self, referred: Iterable[str]) -> list[Path]:
        """Remove what a killed referee left: uploads and builds in ``tmp/``, bundles
        whose sha256 is not in ``referred``. Call it only while no upload runs (at
        start). Returns what it removed."""
        keep = set(referred)
        removed = []
        if self.tmp.is_dir():
            unmount_under(self.tmp)  # a build's capped /out, left mounted by a kill
            removed += list(self.tmp.iterdir())
        content = self.folder / "sha256"
        if content.is_dir():
            removed += [p for p in content.iterdir() if p.name not in keep]
        for path in removed:
            shutil.rmtree(path, ignore_errors=True)
        return removed


async def receive_bundle(files: BundleFiles, fmt: str, size: int, sha256: str,
                         requests: AsyncIterator[Any]) -> Stored:
    """Receive the chunks of an upload's messages (after its header: each has a
    ``chunk`` in its ``part`` oneof), check and store the bundle. Whatever happens,
    nothing of it is left in ``tmp/`` when this returns or raises. BundleError (or
    BundleTooLarge) says why it is refused."""
    receiving = files.receive(fmt, size, sha256)
    try:
        async for message in requests:
            if message.WhichOneof("part") != "chunk":
                raise BundleError("only chunks may follow the header")
            receiving.write(message.chunk)
        # The thread is waited for even if the call is cancelled meanwhile: nothing may
        # write into the folder once it is being removed.
        finishing = asyncio.ensure_future(asyncio.to_thread(receiving.finish))
        try:
            return await asyncio.shield(finishing)
        except asyncio.CancelledError:
            await asyncio.wait([finishing])
            raise
    finally:
        await asyncio.to_thread(receiving.discard)
