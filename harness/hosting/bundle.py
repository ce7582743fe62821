"""A submitted bot's bundle: unpacking the archive (hostile input) and reading its
manifest, ``bot.toml``.

An archive is a ``.tar.gz`` or a ``.zip``. Unpacking never trusts it: an entry with an
absolute path, a ``..`` component, a name given twice, or a path through a symbolic link
is refused; so are hard links, devices, FIFOs and sockets, and symbolic links that point
outside the tree (checked on the unpacked files, so chains of links are caught too). The
bytes written and the entries made are counted as they are written, whatever the archive
declares, and unpacking stops at :class:`UnpackLimits` (a "zip bomb" is refused, not
unpacked). What an archive may make the reader hold before any entry is written is
bounded too: a tar's long-name, long-link and pax headers are refused over
:data:`MAX_EXTENDED_HEADER` bytes before they are read (and sparse files altogether), its
gzip stream is decompressed no further than the unpack cap plus room for the headers,
and a zip whose central directory lists more entries than the cap is refused before
:class:`zipfile.ZipFile` parses it. Files are written with mode 0644, or 0755 when the
archive marks them executable; nothing else of the archive's metadata (owners, times,
setuid bits) is kept. An entry's name quoted in an error is cut short.

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

import contextlib
import gzip
import os
import shutil
import stat
import struct
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Final

from harness.errors import BundleError, BundleTooLarge

__all__ = ["FORMATS", "MANIFEST", "MAX_EXTENDED_HEADER", "RUNTIMES", "Manifest",
           "UnpackLimits", "bundle_root", "parse_manifest", "read_manifest", "unpack"]

MANIFEST: Final = "bot.toml"
RUNTIMES: Final = ("python", "node", "native")
FORMATS: Final = ("tar.gz", "zip")
_COPY_CHUNK: Final = 1 << 16
_MAX_ARGS: Final = 64
_MAX_ARG_CHARS: Final = 4096

MAX_EXTENDED_HEADER: Final = 64 << 10
"""The most bytes of one tar extended header (a GNU long name or long link, a pax
header) an archive may have: real names are short, and tarfile reads such a header into
memory whole."""
_MAX_EXTENDED_TOTAL: Final = 8 << 20  # all of an archive's extended headers together
_MAX_GLOBAL_HEADERS: Final = 4 << 10  # its pax global headers, applied to every entry
_HEADER_ROOM: Final = 4 << 10  # per entry, in the gzip stream: headers and padding
_MAX_NAME_BYTES: Final = 4096  # an entry's path (PATH_MAX)
_QUOTED_CHARS: Final = 100  # of a name or a value quoted in an error


@dataclass(frozen=True, slots=True)
class UnpackLimits:
    """The most an archive may unpack to."""

    max_bytes: int = 500 << 20
    max_files: int = 20_000


def _quoted(value: object) -> str:
    """``value`` quoted for an error (``repr``, a string's first characters only): a
    name from an archive can be as long as the archive lets it be."""
    if isinstance(value, str) and len(value) > _QUOTED_CHARS:
        return f"{value[:_QUOTED_CHARS]!r}... ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= 2 * _QUOTED_CHARS else f"{text[:2 * _QUOTED_CHARS]}..."


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
                          f'{key} = ["python", "bot.py"]; got {_quoted(value)}')
    if len(value) > _MAX_ARGS:
        raise BundleError(f"{MANIFEST}: {key} has {len(value)} arguments; at most {_MAX_ARGS}")
    for arg in value:
        if not isinstance(arg, str) or not arg or "\0" in arg or len(arg) > _MAX_ARG_CHARS:
            raise BundleError(f"{MANIFEST}: every argument of {key} must be a non-empty "
                              f"string (at most {_MAX_ARG_CHARS} characters); got "
                              f"{_quoted(arg)}")
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
        raise BundleError(f"{MANIFEST}: unknown key {_quoted(unknown[0])} (the keys are "
                          f"runtime, command and build)")
    runtime = data.get("runtime")
    if runtime not in RUNTIMES:
        raise BundleError(f"{MANIFEST}: runtime must be one of {', '.join(RUNTIMES)}; got "
                          f"{_quoted(runtime)}")
    if "command" not in data:
        raise BundleError(f'{MANIFEST}: command is missing (e.g. command = ["python", '
                          f'"bot.py"])')
    command = _argv("command", data["command"])
    build = _argv("build", data["build"]) if "build" in data else ()
    first = command[0]
    if runtime == "python" and first not in ("python", "python3"):
        raise BundleError(f'{MANIFEST}: a python bot\'s command starts with "python" (the '
                          f"referee's Python runs it); got {_quoted(first)}")
    if runtime == "node" and first != "node":
        raise BundleError(f'{MANIFEST}: a node bot\'s command starts with "node"; got '
                          f"{_quoted(first)}")
    if runtime == "native" and (_relative(first) is None or first in (".", "./")):
        raise BundleError(f"{MANIFEST}: a native bot's command starts with the relative "
                          f"path of its executable in the bundle (or made by its build); "
                          f"got {_quoted(first)}")
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
            raise BundleError(f"{MANIFEST}: the command {_quoted(manifest.command[0])} is "
                              f"not an executable file of the bundle (and there is no "
                              f"build to make it)")
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
            raise BundleError(f"the archive has an entry with an unsafe path: "
                              f"{_quoted(name)} (absolute, with '..', or empty)")
        rel = PurePosixPath(*rel.parts)
        if len(name.encode("utf-8", "replace")) > _MAX_NAME_BYTES or any(
                len(part.encode("utf-8", "replace")) > 255 for part in rel.parts):
            raise BundleError(f"the archive has an entry whose name is too long: "
                              f"{_quoted(name)} (at most {_MAX_NAME_BYTES} bytes, 255 a "
                              f"part)")
        if any(parent in self.links for parent in rel.parents):
            raise BundleError(f"the archive writes {_quoted(name)} through a symbolic link")
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
        if entry.kind == "dir" and entry.name.rstrip("/") == ".":
            return  # the folder itself, as `tar -C folder .` writes it first
        rel, path = self._path(entry.name)
        if entry.kind == "dir":
            if rel in self.links or (rel in self.seen and not path.is_dir()):
                raise BundleError(f"the archive has {_quoted(entry.name)} twice")
            self._parents(rel, path)
            path.mkdir(mode=0o755, exist_ok=True)
            self.seen.add(rel)
            return
        if rel in self.seen:
            raise BundleError(f"the archive has {_quoted(entry.name)} twice")
        self.seen.add(rel)
        self._parents(rel, path)
        if entry.kind == "symlink":
            target = entry.target
            if len(target) > _MAX_NAME_BYTES:
                raise BundleError(f"the symbolic link {_quoted(entry.name)} points to a "
                                  f"path of {len(target)} characters; at most "
                                  f"{_MAX_NAME_BYTES}")
            if not target or target.startswith("/") or "\0" in target:
                raise BundleError(f"the symbolic link {_quoted(entry.name)} points outside "
                                  f"the bundle ({_quoted(target)})")
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
                raise BundleError(f"the symbolic link {_quoted(rel.as_posix())} points "
                                  f"outside the bundle")


class _Inflated:
    """A gzip stream, decompressed no further than ``limit`` bytes in all (a backward
    seek, which starts over from the beginning, counts again): whatever the tar inside
    says, reading it costs no more. Only reading: what tarfile needs of a file object."""

    def __init__(self, raw: IO[bytes], limit: int, cap_mib: int) -> None:
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._limit = limit
        self._cap_mib = cap_mib
        self._spent = 0

    def _spend(self, count: int) -> None:
        self._spent += count
        if self._spent > self._limit:
            raise BundleTooLarge(f"the archive decompresses to more than "
                                 f"{self._limit >> 20} MiB (its files may hold at most "
                                 f"{self._cap_mib} MiB)")

    def read(self, size: int = -1, /) -> bytes:
        room = self._limit - self._spent + 1
        data = self._gz.read(room if size < 0 else min(size, room))
        self._spend(len(data))
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET, /) -> int:
        here = self._gz.tell()
        if whence == os.SEEK_CUR:
            offset += here
        elif whence != os.SEEK_SET:
            raise OSError("a gzip stream is read forward only")
        self._spend(offset - here if offset >= here else offset)
        return self._gz.seek(offset)

    def tell(self) -> int:
        return self._gz.tell()

    def write(self, data: bytes, /) -> int:
        raise OSError("a bundle is only read")

    def close(self) -> None:
        self._gz.close()


_EXTENDED: Final = {tarfile.GNUTYPE_LONGNAME: "GNU long-name", tarfile.GNUTYPE_LONGLINK:
                    "GNU long-link", tarfile.XHDTYPE: "pax", tarfile.SOLARIS_XHDTYPE: "pax",
                    tarfile.XGLTYPE: "pax global"}
_MAX_IN_A_ROW: Final = 8  # extended headers before one entry (tarfile recurses on each)


class _Header(tarfile.TarInfo):
    """A tar header that refuses, before tarfile reads it, an extended header (which
    tarfile reads into memory whole) over :data:`MAX_EXTENDED_HEADER` bytes or beyond
    what :class:`_TarReader` allows of them together; and sparse files, whose maps
    tarfile reads into memory for as long as the archive goes on. What is raised here
    passes through ``TarFile.next``, which catches only tarfile's own header errors."""

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        kind = _EXTENDED.get(self.type)
        if isinstance(tar, _TarReader):
            tar.check_header(kind, self.size)
        if self.type == tarfile.GNUTYPE_SPARSE:
            _refuse_sparse()
        member: tarfile.TarInfo = tarfile.TarInfo._proc_member(  # type: ignore[attr-defined]
            self, tar)
        return member

    def _proc_gnusparse_00(self, *_: object) -> None:
        _refuse_sparse()

    def _proc_gnusparse_01(self, *_: object) -> None:
        _refuse_sparse()

    def _proc_gnusparse_10(self, *_: object) -> None:
        _refuse_sparse()


def _refuse_sparse() -> None:
    raise BundleError("the archive has a sparse file (tar --sparse); bundles hold "
                      "ordinary files only")


class _TarReader(tarfile.TarFile):
    """A TarFile reading :class:`_Header` s: it counts their extended headers."""

    tarinfo = _Header
    members: list[tarfile.TarInfo]  # (tarfile's, not in its stubs)
    extended = 0  # bytes of extended headers
    global_headers = 0  # of pax global headers, applied to every entry after them
    in_a_row = 0

    def check_header(self, kind: str | None, size: int) -> None:
        """Refuse an extended header (``kind`` of :data:`_EXTENDED`; None for an entry's
        own header) of ``size`` bytes over the bounds."""
        if kind is None:
            self.in_a_row = 0
            return
        if size > MAX_EXTENDED_HEADER:
            raise BundleError(f"the archive has a {kind} header of {size} bytes; at most "
                              f"{MAX_EXTENDED_HEADER} (names and attributes are short)")
        self.in_a_row += 1
        if self.in_a_row > _MAX_IN_A_ROW:
            raise BundleError(f"the archive has more than {_MAX_IN_A_ROW} long-name, "
                              f"long-link or pax headers in a row")
        self.extended += size
        if self.extended > _MAX_EXTENDED_TOTAL:
            raise BundleError(f"the archive's long-name, long-link and pax headers hold "
                              f"more than {_MAX_EXTENDED_TOTAL >> 20} MiB in all")
        if kind == _EXTENDED[tarfile.XGLTYPE]:
            self.global_headers += size
            if self.global_headers > _MAX_GLOBAL_HEADERS:
                raise BundleError(f"the archive's pax global headers hold more than "
                                  f"{_MAX_GLOBAL_HEADERS} bytes")


def _tar_entries(tar: _TarReader) -> Iterator[tuple[_Entry, IO[bytes] | None]]:
    while (member := tar.next()) is not None:
        # tarfile keeps every member it read (and its pax attributes) for random
        # access, which unpacking does not need.
        tar.members.clear()
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
            raise BundleError(f"the archive's entry {_quoted(member.name)} is {what}; only "
                              f"files, folders and symbolic links inside the bundle are "
                              f"allowed")


_EOCD: Final = struct.Struct("<4s4H2LH")  # zip's end of central directory record
_EOCD64_LOCATOR: Final = struct.Struct("<4sLQL")
_EOCD64: Final = struct.Struct("<4sQ2H2L4Q")
_CENTRAL: Final = struct.Struct("<4s4B4HL2L5H2L")  # a central directory's file header
_EOCD_SIG: Final = b"PK\x05\x06"
_EOCD64_LOCATOR_SIG: Final = b"PK\x06\x07"
_EOCD64_SIG: Final = b"PK\x06\x06"
_CENTRAL_SIG: Final = b"PK\x01\x02"


def _zip_directory(raw: IO[bytes]) -> tuple[int, int, int] | None:
    """Where ``zipfile`` will read a zip's central directory, found the way it finds it
    (``zipfile._EndRecData``): (the entries it declares, its size, its offset), or None
    when there is none (zipfile then refuses the archive)."""
    size = raw.seek(0, os.SEEK_END)
    if size < _EOCD.size:
        return None
    raw.seek(size - _EOCD.size)
    record = raw.read(_EOCD.size)
    where = size - _EOCD.size
    if record[:4] != _EOCD_SIG or record[-2:] != b"\0\0":
        start = max(size - (1 << 16) - _EOCD.size, 0)  # after a comment of up to 64 KiB
        raw.seek(start)
        tail = raw.read()
        found = tail.rfind(_EOCD_SIG)
        record = tail[found:found + _EOCD.size]
        if found < 0 or len(record) != _EOCD.size:
            return None
        where = start + found
    fields = _EOCD.unpack(record)
    entries, directory, ahead = fields[4], fields[5], 0
    if where >= _EOCD64_LOCATOR.size + _EOCD64.size:
        raw.seek(where - _EOCD64_LOCATOR.size)
        locator = raw.read(_EOCD64_LOCATOR.size)
        if locator[:4] == _EOCD64_LOCATOR_SIG:
            raw.seek(where - _EOCD64_LOCATOR.size - _EOCD64.size)
            record = raw.read(_EOCD64.size)
            if record[:4] == _EOCD64_SIG:
                fields = _EOCD64.unpack(record)
                entries, directory = fields[7], fields[8]
                ahead = _EOCD64_LOCATOR.size + _EOCD64.size
    start = where - directory - ahead
    return (entries, directory, start) if start >= 0 else None


def _check_zip_directory(raw: IO[bytes], limits: UnpackLimits) -> None:
    """Refuse a zip whose central directory lists more entries than ``limits`` allow,
    before zipfile reads it (it makes an object of every entry, and heeds no count).
    The entries are counted as zipfile will walk them, whatever count the archive
    declares, up to one more than the cap."""
    found = _zip_directory(raw)
    if found is None:
        return  # not a zip: zipfile says so
    declared, size, start = found
    if declared > limits.max_files:
        raise BundleTooLarge(f"the archive has {declared} entries; at most "
                             f"{limits.max_files}")
    raw.seek(start)
    walked = count = 0
    while walked < size:
        header = raw.read(_CENTRAL.size)
        if len(header) != _CENTRAL.size or header[:4] != _CENTRAL_SIG:
            return  # zipfile says what is wrong
        count += 1
        if count > limits.max_files:
            raise BundleTooLarge(f"the archive has more than {limits.max_files} entries")
        fields = _CENTRAL.unpack(header)
        rest = fields[12] + fields[13] + fields[14]  # name, extra field, comment
        walked += _CENTRAL.size + rest
        raw.seek(rest, os.SEEK_CUR)


def _zip_entries(archive: zipfile.ZipFile) -> Iterator[tuple[_Entry, IO[bytes] | None]]:
    for info in archive.infolist():
        mode = info.external_attr >> 16
        if info.is_dir():
            yield _Entry(info.filename, "dir"), None
        elif stat.S_ISLNK(mode):
            if info.file_size > 4096:
                raise BundleError(f"the symbolic link {_quoted(info.filename)} is malformed")
            target = archive.read(info).decode("utf-8", errors="replace")
            yield _Entry(info.filename, "symlink", target=target), None
        elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: made without a file type
            raise BundleError(f"the archive's entry {_quoted(info.filename)} is a special "
                              f"file; only files, folders and symbolic links are allowed")
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
            limit = limits.max_bytes + limits.max_files * _HEADER_ROOM + _MAX_EXTENDED_TOTAL
            with archive.open("rb") as raw, \
                    contextlib.closing(_Inflated(raw, limit, limits.max_bytes >> 20)) as gz, \
                    _TarReader(fileobj=gz, mode="r") as tar:
                for entry, source in _tar_entries(tar):
                    writer.add(entry, source)
        elif fmt == "zip":
            with archive.open("rb") as raw:
                _check_zip_directory(raw, limits)
            with zipfile.ZipFile(archive) as z:
                for entry, source in _zip_entries(z):
                    writer.add(entry, source)
        else:
            raise BundleError(f"unknown bundle format {_quoted(fmt)}; use one of "
                              f"{', '.join(FORMATS)}")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
        if isinstance(e, BundleError):
            raise
        text = str(e)
        if len(text) > 2 * _QUOTED_CHARS:
            text = f"{text[:2 * _QUOTED_CHARS]}..."
        raise BundleError(f"the bundle is not a readable {fmt} archive: {text}") from None
    writer.check_links()
    for folder, _, _ in os.walk(dest):  # (os.walk does not follow symbolic links)
        os.chmod(folder, 0o755)
