"""A submitted bot's bundle: unpacking the archive (hostile input) and reading its
manifest, ``bot.toml``.

An archive is a ``.tar.gz`` or a ``.zip``. Unpacking never trusts it: an entry with an
absolute path, a ``..`` component, a name given twice, or a path through a symbolic link
is refused; so are hard links, devices, FIFOs and sockets, and symbolic links that point
outside the tree (checked on the unpacked files, so chains of links are caught too). The
bytes written and the entries made are counted as they are written, whatever the archive
declares, and unpacking stops at :class:`UnpackLimits` (a "zip bomb" is refused, not
unpacked). Files are written with mode 0644, or 0755 when the archive marks them
executable; nothing else of the archive's metadata (owners, times, setuid bits) is kept.

The manifest, at the root of the bundle (or of its one top-level folder)::

    runtime = "python"                  # "python", "node" or "native"
    command = ["python", "bot.py"]      # how to start the bot, run in the bundle's folder
    build = ["make"]                    # optional: run once, in a box, before it plays

``runtime = "python"`` runs ``command`` with the referee's own Python (``python`` or
``python3`` first; the harness SDK and gRPC are importable), ``"node"`` with the
referee's Node.js (``node`` first; the bundle brings its ``node_modules``), ``"native"``
an executable of the bundle or of its build (a relative path first).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Final

from harness.errors import BundleError, BundleTooLarge

__all__ = ["FORMATS", "MANIFEST", "RUNTIMES", "Manifest", "UnpackLimits", "bundle_root",
           "parse_manifest", "read_manifest", "unpack"]

MANIFEST: Final = "bot.toml"
RUNTIMES: Final = ("python", "node", "native")
FORMATS: Final = ("tar.gz", "zip")
_COPY_CHUNK: Final = 1 << 16
_MAX_ARGS: Final = 64
_MAX_ARG_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class UnpackLimits:
    """The most an archive may unpack to."""

    max_bytes: int = 500 << 20
    max_files: int = 20_000


# ---------------------------------------------------------------------- manifest

@dataclass(frozen=True, slots=True)
class Manifest:
    """A bundle's ``bot.toml``."""

    runtime: str
    command: tuple[str, ...]
    build: tuple[str, ...] = ()

    def argv(self) -> tuple[str, ...]:
        """The command to start the bot with, its interpreter resolved on this machine:
        the referee's Python for ``python``, ``node`` on the PATH for ``node``, a native
        executable as a path from the bot's folder."""
        first, rest = self.command[0], self.command[1:]
        if self.runtime == "native":
            return (first if "/" in first else f"./{first}", *rest)
        return (_interpreter(self.runtime, first), *rest)

    def env(self) -> dict[str, str]:
        """Environment variables the runtime needs in a box: Node.js reads the system's
        OpenSSL configuration when it starts and will not start without it, and a box
        shows no ``/etc/ssl``, so a node bot gets an empty one (it dials a Unix socket
        and needs no TLS)."""
        return {"OPENSSL_CONF": "/dev/null"} if self.runtime == "node" else {}

    def build_argv(self) -> tuple[str, ...]:
        """The build command, a leading ``python`` (for a python bot) or ``node`` (for a
        node bot) resolved as in :meth:`argv`."""
        first, rest = self.build[0], self.build[1:]
        return (_interpreter(self.runtime, first), *rest)


def _interpreter(runtime: str, first: str) -> str:
    if runtime == "python" and first in ("python", "python3"):
        return sys.executable
    if runtime == "node" and first == "node":
        return shutil.which("node") or "node"
    return first


def _argv(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise BundleError(f"{MANIFEST}: {key} must be a non-empty array of strings, e.g. "
                          f'{key} = ["python", "bot.py"]; got {value!r}')
    if len(value) > _MAX_ARGS:
        raise BundleError(f"{MANIFEST}: {key} has {len(value)} arguments; at most {_MAX_ARGS}")
    for arg in value:
        if not isinstance(arg, str) or not arg or "\0" in arg or len(arg) > _MAX_ARG_CHARS:
            raise BundleError(f"{MANIFEST}: every argument of {key} must be a non-empty "
                              f"string (at most {_MAX_ARG_CHARS} characters); got {arg!r}")
    return tuple(value)


def _relative(path: str) -> PurePosixPath | None:
    """``path`` as a relative path inside the bundle, or None (absolute, or with ``..``)."""
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or "\\" in path:
        return None
    return p


def parse_manifest(text: str) -> Manifest:
    """The manifest in ``text``; BundleError saying exactly what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BundleError(f"{MANIFEST} is not valid TOML: {e}") from None
    unknown = sorted(set(data) - {"runtime", "command", "build"})
    if unknown:
        raise BundleError(f"{MANIFEST}: unknown key {unknown[0]!r} (the keys are runtime, "
                          f"command and build)")
    runtime = data.get("runtime")
    if runtime not in RUNTIMES:
        raise BundleError(f"{MANIFEST}: runtime must be one of {', '.join(RUNTIMES)}; got "
                          f"{runtime!r}")
    if "command" not in data:
        raise BundleError(f'{MANIFEST}: command is missing (e.g. command = ["python", '
                          f'"bot.py"])')
    command = _argv("command", data["command"])
    build = _argv("build", data["build"]) if "build" in data else ()
    first = command[0]
    if runtime == "python" and first not in ("python", "python3"):
        raise BundleError(f'{MANIFEST}: a python bot\'s command starts with "python" (the '
                          f"referee's Python runs it); got {first!r}")
    if runtime == "node" and first != "node":
        raise BundleError(f'{MANIFEST}: a node bot\'s command starts with "node"; got '
                          f"{first!r}")
    if runtime == "native" and (_relative(first) is None or first in (".", "./")):
        raise BundleError(f"{MANIFEST}: a native bot's command starts with the relative "
                          f"path of its executable in the bundle (or made by its build); "
                          f"got {first!r}")
    return Manifest(runtime=runtime, command=command, build=build)


def bundle_root(tree: Path) -> Path:
    """The folder of ``tree`` holding bot.toml: ``tree`` itself, or its only entry when
    that is a folder (an archive of a folder rather than of its contents)."""
    if (tree / MANIFEST).is_file():
        return tree
    entries = list(tree.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() \
            and (entries[0] / MANIFEST).is_file():
        return entries[0]
    raise BundleError(f"the bundle has no {MANIFEST} at its top (it says how to run the "
                      f"bot: runtime, command and optionally build)")


def read_manifest(root: Path) -> Manifest:
    """The manifest of the bundle unpacked in ``root`` (see :func:`bundle_root`), checked
    against this machine: the runtime it needs must be here, a native command must be in
    the bundle unless a build makes it."""
    path = root / MANIFEST
    if path.is_symlink() or path.stat().st_size > 64 << 10:
        raise BundleError(f"{MANIFEST} must be a small regular file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BundleError(f"{MANIFEST} is not UTF-8 text") from None
    manifest = parse_manifest(text)
    if manifest.runtime == "node" and shutil.which("node") is None:
        raise BundleError("runtime \"node\": this referee has no Node.js (node is not on its "
                          "PATH)")
    if manifest.runtime == "native" and not manifest.build:
        exe = root / manifest.command[0]
        if not exe.is_file() or not os.access(exe, os.X_OK):
            raise BundleError(f"{MANIFEST}: the command {manifest.command[0]!r} is not an "
                              f"executable file of the bundle (and there is no build to "
                              f"make it)")
    return manifest


# ---------------------------------------------------------------------- unpacking

@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    kind: str  # "file", "dir", "symlink"
    executable: bool = False
    target: str = ""


class _Writer:
    """Writes checked entries under ``root``, counting bytes and entries."""

    def __init__(self, root: Path, limits: UnpackLimits) -> None:
        self.root = root
        self.limits = limits
        self.bytes = 0
        self.count = 0
        self.seen: set[PurePosixPath] = set()
        self.links: set[PurePosixPath] = set()

    def _path(self, name: str) -> tuple[PurePosixPath, Path]:
        rel = _relative(name.rstrip("/")) if name.rstrip("/") else None
        if rel is None or not rel.parts or any(part in ("", ".") for part in rel.parts):
            raise BundleError(f"the archive has an entry with an unsafe path: {name!r} "
                              f"(absolute, with '..', or empty)")
        rel = PurePosixPath(*rel.parts)
        if any(parent in self.links for parent in rel.parents):
            raise BundleError(f"the archive writes {name!r} through a symbolic link")
        self.count += 1
        if self.count > self.limits.max_files:
            raise BundleTooLarge(f"the archive has more than {self.limits.max_files} entries")
        return rel, self.root.joinpath(*rel.parts)

    def _parents(self, rel: PurePosixPath, path: Path) -> None:
        for parent in reversed(rel.parents[:-1]):
            if parent not in self.seen:
                self.seen.add(parent)
                self.count += 1
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)

    def add(self, entry: _Entry, source: IO[bytes] | None) -> None:
        rel, path = self._path(entry.name)
        if entry.kind == "dir":
            if rel in self.links or (rel in self.seen and not path.is_dir()):
                raise BundleError(f"the archive has {entry.name!r} twice")
            self._parents(rel, path)
            path.mkdir(mode=0o755, exist_ok=True)
            self.seen.add(rel)
            return
        if rel in self.seen:
            raise BundleError(f"the archive has {entry.name!r} twice")
        self.seen.add(rel)
        self._parents(rel, path)
        if entry.kind == "symlink":
            target = entry.target
            if not target or target.startswith("/") or "\0" in target:
                raise BundleError(f"the symbolic link {entry.name!r} points outside the "
                                  f"bundle ({target!r})")
            self.links.add(rel)
            os.symlink(target, path)
            return
        assert source is not None
        mode = 0o755 if entry.executable else 0o644
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        os.fchmod(fd, mode)  # whatever the umask: a box's user reads it
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_COPY_CHUNK):
                self.bytes += len(chunk)
                if self.bytes > self.limits.max_bytes:
                    raise BundleTooLarge(f"the archive unpacks to more than "
                                         f"{self.limits.max_bytes >> 20} MiB")
                out.write(chunk)

    def check_links(self) -> None:
        """Every symbolic link, resolved on the files written, stays inside the tree."""
        root = self.root.resolve()
        for rel in self.links:
            real = Path(os.path.realpath(self.root.joinpath(*rel.parts)))
            if real != root and root not in real.parents:
                raise BundleError(f"the symbolic link {rel.as_posix()!r} points outside "
                                  f"the bundle")


def _tar_entries(tar: tarfile.TarFile) -> Iterator[tuple[_Entry, IO[bytes] | None]]:
    for member in tar:
        if member.isdir():
            yield _Entry(member.name, "dir"), None
        elif member.isreg():
            yield (_Entry(member.name, "file", executable=bool(member.mode & 0o111)),
                   tar.extractfile(member))
        elif member.issym():
            yield _Entry(member.name, "symlink", target=member.linkname), None
        else:
            what = ("a hard link" if member.islnk() else "a FIFO" if member.isfifo()
                    else "a device" if member.isdev() else "a special file")
            raise BundleError(f"the archive's entry {member.name!r} is {what}; only "
                              f"files, folders and symbolic links inside the bundle are "
                              f"allowed")


def _zip_entries(archive: zipfile.ZipFile) -> Iterator[tuple[_Entry, IO[bytes] | None]]:
    for info in archive.infolist():
        mode = info.external_attr >> 16
        if info.is_dir():
            yield _Entry(info.filename, "dir"), None
        elif stat.S_ISLNK(mode):
            if info.file_size > 4096:
                raise BundleError(f"the symbolic link {info.filename!r} is malformed")
            target = archive.read(info).decode("utf-8", errors="replace")
            yield _Entry(info.filename, "symlink", target=target), None
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: made without a file type
            raise BundleError(f"the archive's entry {info.filename!r} is a special file; "
                              f"only files, folders and symbolic links are allowed")
        else:
            with archive.open(info) as source:
                yield (_Entry(info.filename, "file", executable=bool(mode & 0o111)),
                       source)


def unpack(archive: Path, fmt: str, dest: Path, limits: UnpackLimits) -> None:
    """Unpack ``archive`` (``fmt``: one of :data:`FORMATS`) into ``dest`` (a new, empty
    folder), checking every entry; BundleError (BundleTooLarge for the caps) says why
    it is refused. On an error ``dest`` may hold part of the tree: the caller removes
    it."""
    writer = _Writer(dest, limits)
    try:
        if fmt == "tar.gz":
            with tarfile.open(archive, "r:gz") as tar:
                for entry, source in _tar_entries(tar):
                    writer.add(entry, source)
        elif fmt == "zip":
            with zipfile.ZipFile(archive) as z:
                for entry, source in _zip_entries(z):
                    writer.add(entry, source)
        else:
            raise BundleError(f"unknown bundle format {fmt!r}; use one of "
                              f"{', '.join(FORMATS)}")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        if isinstance(e, BundleError):
            raise
        raise BundleError(f"the bundle is not a readable {fmt} archive: {e}") from None
    writer.check_links()
    for folder, _, _ in os.walk(dest):  # (os.walk does not follow symbolic links)
        os.chmod(folder, 0o755)
