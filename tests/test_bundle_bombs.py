"""Archives made to exhaust the referee while it unpacks them (harness/hosting/bundle.py):
a few hundred KiB of .tar.gz whose GNU long-name, long-link or pax header declares
256 MiB (tarfile would read it into memory whole, and the name would be quoted in the
error sent back), a GNU sparse map that goes on for as long as the archive does, a chain
of extended headers (tarfile recurses on each), and a .zip listing 400,000 entries
(zipfile would make an object of each before the entry cap applied). Each is refused,
quickly, with a short message, before the memory is spent: the unpacking runs in a
fresh Python process whose peak resident memory is read afterwards. Ordinary bundles,
long names and links included, still unpack.

One bomb goes through a real ladder's SubmitBot with the bot's own token, as an owner
would send it."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal

import grpc
import pytest
from serve_support import REPO
from submit_support import HostLadder, bearer, python_bot, submit, tar_gz

from harness.errors import BundleError, BundleTooLarge
from harness.hosting import bundle
from harness.hosting.bundle import MAX_EXTENDED_HEADER, UnpackLimits, unpack

MIB = 1 << 20
BOMB = 256 * MIB  # what a bomb's extended header declares
GREW_MIB = 100  # the most the unpacking process's peak memory may grow by
SECONDS = 5.0
SHORT = 1024  # the longest an error's text may be
ENTRIES = 400_000

# ---------------------------------------------------------------------- building bombs


def _header(name: str, kind: bytes, size: int = 0, *, linkname: str = "",
            fmt: Literal[0, 1, 2] = tarfile.GNU_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.linkname = linkname
    return info.tobuf(fmt)


def _filler(count: int, fill: bytes = b"a") -> list[bytes]:
    """``count`` bytes of ``fill`` as gzip members (a gzip stream may be several
    concatenated): one MiB compressed once and repeated, so that hundreds of MiB take a
    few hundred KiB."""
    whole = gzip.compress(fill * (MIB // len(fill)), 9)
    full, rest = divmod(count, MIB)
    return [whole] * full + ([gzip.compress(fill * (rest // len(fill)), 9)] if rest else [])


def _end(entry: bytes) -> bytes:
    """A member ``entry`` (a header without data) and the end of the archive."""
    return gzip.compress(entry + bytes(2 * tarfile.BLOCKSIZE))


def _extended_bomb(kind: bytes) -> bytes:
    """A .tar.gz whose first header is an extended header of ``kind`` declaring BOMB
    bytes (a name, a link target or a pax record of that length), then an entry."""
    if kind in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK):
        head = [gzip.compress(_header("././@LongLink", kind, BOMB))]
        body = _filler(BOMB)
        entry = _header("link", tarfile.SYMTYPE, linkname="t") \
            if kind == tarfile.GNUTYPE_LONGLINK else _header("file", tarfile.REGTYPE)
        return b"".join([*head, *body, _end(entry)])
    record = f"{BOMB} path=".encode()  # one pax record: "<length> path=<value>\n"
    head = [gzip.compress(_header("pax", kind, BOMB, fmt=tarfile.USTAR_FORMAT) + record)]
    body = _filler(BOMB - len(record) - 1)
    return b"".join([*head, *body, gzip.compress(b"\n"),
                     _end(_header("file", tarfile.REGTYPE, fmt=tarfile.USTAR_FORMAT))])


SPARSE_MAP = 48 * MIB


def _sparse_map_bomb() -> bytes:
    """A GNU sparse file (pax format 1.0) whose map, read from the start of its data,
    claims a billion regions and lists ``SPARSE_MAP`` bytes of them: tarfile keeps each
    number in a list until the map is complete."""
    pax = tarfile.TarInfo("big")
    pax.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                       "GNU.sparse.name": "big", "GNU.sparse.realsize": "1"}
    pax.size = SPARSE_MAP + tarfile.BLOCKSIZE
    head = pax.tobuf(tarfile.PAX_FORMAT)  # the pax header, then the entry's own
    first = b"1000000000\n".ljust(tarfile.BLOCKSIZE, b"0")
    return b"".join([gzip.compress(head + first), *_filler(SPARSE_MAP, b"0\n")])


def _zip_of_empties(count: int, *, declared: int | None = None) -> bytes:
    """A .zip of ``count`` empty files. Its end record declares their number (with the
    Zip64 records that more than 65,535 entries need), or ``declared`` instead."""
    local, central = bytearray(), bytearray()
    for i in range(count):
        name = b"e%d" % i
        central += struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 33,
                               0, 0, 0, len(name), 0, 0, 0, 0, 0o100644 << 16, len(local))
        central += name
        local += struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 33, 0, 0, 0,
                             len(name), 0)
        local += name
    offset, size = len(local), len(central)
    end = b""
    entries = count if declared is None else declared
    if declared is None and count > 0xFFFF:
        end += struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count,
                           size, offset)
        end += struct.pack("<4sLQL", b"PK\x06\x07", 0, offset + size, 1)
        entries = 0xFFFF
    end += struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, size, offset, 0)
    return bytes(local + central) + end


# ---------------------------------------------------------------------- measuring

_MEASURE = """
import json, sys, time
from pathlib import Path
from harness.errors import BundleError
from harness.hosting.bundle import UnpackLimits, unpack

def peak():
    # The high-water mark of this process's own memory, in KiB: unlike getrusage's
    # ru_maxrss, it does not start from the peak of the process that started this one.
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

archive, fmt, dest = sys.argv[1:4]
before, start = peak(), time.monotonic()
try:
    unpack(Path(archive), fmt, Path(dest), UnpackLimits())
    error, kind = "", ""
except BundleError as e:
    error, kind = str(e), type(e).__name__
print(json.dumps({"grew_mib": (peak() - before) / 1024, "seconds": time.monotonic() - start,
                  "kind": kind, "length": len(error), "error": error[:2000]}))
"""


def _unpack_apart(tmp_path: Path, data: bytes, fmt: str) -> dict[str, object]:
    """Unpack ``data`` (with the default limits) in a fresh Python process: how its
    peak memory grew while it did, how long it took, and what it refused with."""
    archive = tmp_path / f"bundle.{fmt}"
    archive.write_bytes(data)
    dest = tmp_path / "files"
    dest.mkdir()
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(archive), fmt, str(dest)],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _assert_refused_cheaply(result: dict[str, object], kind: str, words: str) -> None:
    assert result["kind"] == kind, result
    assert words in str(result["error"]), result
    assert isinstance(result["length"], int) and result["length"] < SHORT, result
    assert isinstance(result["grew_mib"], float) and result["grew_mib"] < GREW_MIB, result
    assert isinstance(result["seconds"], float) and result["seconds"] < SECONDS, result


# ---------------------------------------------------------------------- the bombs

EXTENDED_BOMBS = {
    "long-name": (tarfile.GNUTYPE_LONGNAME, "GNU long-name header"),
    "long-link": (tarfile.GNUTYPE_LONGLINK, "GNU long-link header"),
    "pax": (tarfile.XHDTYPE, "pax header"),
    "pax-global": (tarfile.XGLTYPE, "pax global header"),
}


@pytest.mark.parametrize("case", sorted(EXTENDED_BOMBS))
def test_an_extended_header_bomb_is_refused_before_it_is_read(tmp_path: Path,
                                                              case: str) -> None:
    kind, words = EXTENDED_BOMBS[case]
    data = _extended_bomb(kind)
    assert len(data) < MIB  # small on the wire
    result = _unpack_apart(tmp_path, data, "tar.gz")
    _assert_refused_cheaply(result, "BundleError", f"{words} of {BOMB} bytes; at most "
                                                   f"{MAX_EXTENDED_HEADER}")


def test_a_sparse_map_bomb_is_refused_before_it_is_read(tmp_path: Path) -> None:
    data = _sparse_map_bomb()
    assert len(data) < MIB
    result = _unpack_apart(tmp_path, data, "tar.gz")
    _assert_refused_cheaply(result, "BundleError", "has a sparse file")


def test_a_zip_declaring_too_many_entries_is_refused_before_zipfile_reads_them(
        tmp_path: Path) -> None:
    result = _unpack_apart(tmp_path, _zip_of_empties(ENTRIES), "zip")
    _assert_refused_cheaply(result, "BundleTooLarge",
                            f"the archive has {ENTRIES} entries; at most 20000")


def test_a_zip_understating_its_entries_is_refused_before_zipfile_reads_them(
        tmp_path: Path) -> None:
    # zipfile walks the whole central directory, whatever count the end record gives.
    result = _unpack_apart(tmp_path, _zip_of_empties(ENTRIES, declared=1), "zip")
    _assert_refused_cheaply(result, "BundleTooLarge",
                            "the archive has more than 20000 entries")


def _refusal(folder: Path, data: bytes, fmt: str = "tar.gz") -> BundleError:
    """What unpacking ``data`` in a new ``folder`` is refused with."""
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"bundle.{fmt}"
    archive.write_bytes(data)
    dest = folder / "files"
    dest.mkdir()
    with pytest.raises(BundleError) as caught:
        unpack(archive, fmt, dest, UnpackLimits())
    return caught.value


def test_a_chain_of_extended_headers_is_refused_not_recursed_into(tmp_path: Path) -> None:
    # tarfile reads the header after an extended one by calling itself: 5,000 in a row
    # would end in a RecursionError, which is no BundleError.
    link = _header("././@LongLink", tarfile.GNUTYPE_LONGNAME, tarfile.BLOCKSIZE)
    chain = (link + b"a" * tarfile.BLOCKSIZE) * 5000
    error = _refusal(tmp_path, _end(chain + _header("file", tarfile.REGTYPE)))
    assert "more than 8 long-name, long-link or pax headers in a row" in str(error)


def test_the_extended_headers_of_an_archive_are_bounded_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "_MAX_EXTENDED_TOTAL", 256 << 10)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for i in range(10):
            info = tarfile.TarInfo(f"f{i}")
            info.pax_headers = {"comment": "c" * (40 << 10)}
            tar.addfile(info, io.BytesIO(b""))
    error = _refusal(tmp_path, out.getvalue())
    assert "pax headers hold more than 0 MiB in all" in str(error)


def test_pax_global_headers_are_bounded_together(tmp_path: Path) -> None:
    # A global header applies to every entry after it: tarfile copies it into each.
    record = b"3000 comment=" + b"c" * (3000 - 14) + b"\n"
    glob = _header("g", tarfile.XGLTYPE, len(record), fmt=tarfile.USTAR_FORMAT)
    padded = record.ljust(tarfile.BLOCKSIZE * 6, b"\0")
    data = _end(glob + padded + glob + padded + _header("f", tarfile.REGTYPE))
    assert "pax global headers hold more than 4096 bytes" in str(_refusal(tmp_path, data))


def test_old_gnu_sparse_files_are_refused(tmp_path: Path) -> None:
    data = _end(_header("big", tarfile.GNUTYPE_SPARSE))
    assert "has a sparse file" in str(_refusal(tmp_path, data))


def test_names_quoted_in_errors_are_cut_short(tmp_path: Path) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(tarfile.TarInfo("../" + "a/" * 20_000 + "b"))
    error = str(_refusal(tmp_path, out.getvalue()))
    assert "unsafe path: '../a/a/" in error and "... (40004 characters)" in error
    assert len(error) < 300


def test_a_name_or_link_too_long_to_write_is_refused_by_name(tmp_path: Path) -> None:
    long = "/".join(["d" * 200] * 30)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(tarfile.TarInfo(long))
    error = str(_refusal(tmp_path / "name", out.getvalue()))
    assert "whose name is too long" in error and len(error) < 400
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("link")
        info.type, info.linkname = tarfile.SYMTYPE, long
        tar.addfile(info)
    error = str(_refusal(tmp_path / "link", out.getvalue()))
    assert "points to a path of 6029 characters" in error and len(error) < 400


@contextlib.contextmanager
def _inflated(data: bytes, limit: int) -> Iterator[bundle._Inflated]:
    """``data`` gzipped, read through bundle._Inflated with ``limit``."""
    with io.BytesIO(gzip.compress(data)) as raw, \
            contextlib.closing(bundle._Inflated(raw, limit, 1)) as stream:
        yield stream


def test_the_gzip_stream_is_decompressed_no_further_than_its_bound() -> None:
    # A backstop: what the tar inside says can make tarfile skip ahead or seek back,
    # which decompresses all the same.
    with _inflated(bytes(4 * MIB), MIB) as stream:
        assert len(stream.read(MIB)) == MIB
        with pytest.raises(BundleTooLarge, match="decompresses to more than 1 MiB"):
            stream.read(1)
    with _inflated(bytes(4 * MIB), MIB) as stream, pytest.raises(BundleTooLarge):
        stream.seek(MIB + 1)
    with _inflated(bytes(4 * MIB), MIB) as stream:
        stream.seek(700 << 10)
        stream.seek(0)
        with pytest.raises(BundleTooLarge):
            stream.seek(400 << 10)  # a backward seek starts over: counted again


# ---------------------------------------------------------------------- ordinary bundles

MANIFEST = b'runtime = "python"\ncommand = ["python", "bot.py"]\n'
LONG = "deep/" * 30 + "é" * 100 + ".py"  # over tar's 100 characters, under 4096 bytes


def _ordinary_tar(fmt: Literal[0, 1, 2], glob: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=fmt, pax_headers=glob) as tar:
        for name, data, mode in [("bot.toml", MANIFEST, 0o644), ("bot.py", b"pass\n", 0o755),
                                 (LONG, b"long\n", 0o644)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo("link-" + "l" * 150)
        info.type, info.linkname = tarfile.SYMTYPE, LONG
        tar.addfile(info)
    return out.getvalue()


def _ordinary_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.toml", MANIFEST)
        z.writestr(LONG, b"long\n")
        info = zipfile.ZipInfo("bot.py")
        info.external_attr = 0o100755 << 16
        z.writestr(info, b"pass\n")
        z.comment = b"a comment PK"
    return b"#!/bin/sh\nexit 0\n" + out.getvalue()  # prepended, as a self-extractor is


def _ordinary(tmp_path: Path) -> Iterable[tuple[str, bytes, str]]:
    yield "gnu", _ordinary_tar(tarfile.GNU_FORMAT), "tar.gz"
    yield "pax", _ordinary_tar(tarfile.PAX_FORMAT), "tar.gz"
    # as git archive makes it: a pax global header with the commit
    yield "git", _ordinary_tar(tarfile.PAX_FORMAT, {"comment": "0" * 40}), "tar.gz"
    yield "zip", _ordinary_zip(), "zip"
    if shutil.which("tar"):
        folder = tmp_path / "made-by-tar"
        (folder / Path(LONG).parent).mkdir(parents=True)
        (folder / "bot.toml").write_bytes(MANIFEST)
        (folder / "bot.py").write_bytes(b"pass\n")
        (folder / "bot.py").chmod(0o755)
        (folder / LONG).write_bytes(b"long\n")
        for option in ("--format=gnu", "--format=posix"):
            made = tmp_path / "made.tar.gz"
            subprocess.run(["tar", option, "-czf", str(made), "-C", str(folder), "bot.toml",
                            "bot.py", "deep"], check=True)
            yield f"tar {option}", made.read_bytes(), "tar.gz"
            # The whole folder as ".": its entries are "./", "./bot.toml", ...
            subprocess.run(["tar", option, "-czf", str(made), "-C", str(folder), "."],
                           check=True)
            yield f"tar {option} -C folder .", made.read_bytes(), "tar.gz"


def test_ordinary_bundles_still_unpack(tmp_path: Path) -> None:
    for n, (case, data, fmt) in enumerate(list(_ordinary(tmp_path))):
        archive = tmp_path / f"{n}.{fmt}"
        archive.write_bytes(data)
        dest = tmp_path / f"files-{n}"
        dest.mkdir()
        unpack(archive, fmt, dest, UnpackLimits())
        assert (dest / "bot.toml").read_bytes() == MANIFEST, case
        assert (dest / LONG).read_bytes() == b"long\n", case
        assert os.access(dest / "bot.py", os.X_OK), case
        if fmt == "tar.gz" and not case.startswith("tar "):
            assert (dest / ("link-" + "l" * 150)).read_bytes() == b"long\n", case


def test_the_zip_directory_is_found_where_zipfile_finds_it() -> None:
    for data in (_ordinary_zip(), _zip_of_empties(3), _zip_of_empties(70_000)):
        with io.BytesIO(data) as raw, zipfile.ZipFile(io.BytesIO(data)) as z:
            found = bundle._zip_directory(raw)
            assert found is not None
            assert found[0] == len(z.infolist())
            assert found[2] == z.start_dir


# ---------------------------------------------------------------------- through a ladder

@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostLadder]:
    running = HostLadder(tmp_path_factory.mktemp("bombs"), "[ladder]\nupload_max_mib = 2\n",
                         name="bomb-ladder")
    try:
        yield running
    finally:
        running.kill()


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_bots_owner_submitting_a_long_name_bomb_is_refused_cheaply(
        ladder: HostLadder, tmp_path: Path) -> None:
    bomb = _extended_bomb(tarfile.GNUTYPE_LONGNAME)
    with ladder.channel() as channel:
        first = submit(channel, tar_gz(python_bot(tmp_path / "bot")), "bomber")
        before, stored = _peak_kib(ladder.proc.pid), ladder.stored()
        start = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:
            submit(channel, bomb, "bomber", metadata=bearer(first.token))
        seconds = time.monotonic() - start
    refused = caught.value
    details = refused.details() or ""
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"GNU long-name header of {BOMB} bytes" in details, details
    assert len(details) < SHORT and seconds < SECONDS
    assert (_peak_kib(ladder.proc.pid) - before) >> 10 < GREW_MIB
    assert ladder.stored() == stored and ladder.leftovers() == []
    assert hashlib.sha256(bomb).hexdigest() not in ladder.stored()
