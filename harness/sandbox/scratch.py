"""A folder of capped size: a tmpfs mounted on a folder of the host for as long as a box
writes into it (a build's ``/out``), so that what the box writes can never take more
than the cap, whatever it does, and never the disk that the results store shares.

A tmpfs holds its files in memory; its pages count against the memory limit of the
cgroup of the process that writes them (the build's box), and are freed when the tmpfs
is unmounted. :func:`capped_folder` mounts one for the length of a build, and
:func:`keep` copies what it holds (at most the cap) to a folder on the disk. A referee
killed meanwhile leaves the mount behind: :func:`unmount_under`, run where such folders
are swept at start, removes it.

Mounting needs root (``CAP_SYS_ADMIN``), as the boxes' cgroups do.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

from harness.errors import SandboxError

__all__ = ["BLOCK", "MAX_FILES", "OverCap", "capped_folder", "copy_capped", "disk_cost",
           "is_full", "keep", "merge_tree", "mount_points", "unmount_under"]

MOUNTINFO = Path("/proc/self/mountinfo")
FULL_BYTES = 1 << 20
"""A capped folder with less free space than this is taken to have been filled."""
MAX_FILES = 200_000
"""The most files (and folders) a capped folder holds."""


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SandboxError(f"{what}: {' '.join(argv)}: "
                           f"{done.stderr.strip() or f'exit status {done.returncode}'}")


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it (space, tab, newline and backslash in
    octal)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mount_points() -> list[Path]:
    """Every mount point of this process's mount namespace."""
    try:
        lines = MOUNTINFO.read_text().splitlines()
    except OSError:
        return []
    fields = (line.split() for line in lines)
    return [Path(_unescape(f[4])) for f in fields if len(f) > 4]


def unmount_under(folder: Path) -> list[Path]:
    """Unmount every mount at or under ``folder`` (deepest first, detached if busy);
    returns them. What a referee killed during a build left mounted."""
    root = folder.resolve()
    found = sorted({p for p in mount_points() if p == root or root in p.parents},
                   key=lambda p: len(p.parts), reverse=True)
    for point in found:
        _run(["umount", "--lazy", str(point)], "cannot unmount a capped folder")
    return found


def is_full(folder: Path) -> bool:
    """Whether the capped folder mounted at ``folder`` has (almost) no room, or no file,
    left."""
    info = os.statvfs(folder)
    return info.f_bavail * info.f_frsize < FULL_BYTES or info.f_favail == 0


class OverCap(SandboxError):
    """What a capped folder holds would take more than its cap once copied to the disk
    (sparse files: a tmpfs stores their holes for nothing, a copy would not)."""


BLOCK = 4096
"""What every entry copied to the disk is charged at least (a folder, a link, an empty
file each take an inode and usually a block); a file's size is rounded up to it."""


def disk_cost(info: os.stat_result) -> int:
    """What an entry with ``info`` (an ``lstat``) is charged against a cap on the disk."""
    size = info.st_size if stat.S_ISREG(info.st_mode) else 0
    return max(BLOCK, -(-size // BLOCK) * BLOCK)


def copy_capped(source: Path, target: Path, cap: int) -> None:
    """Copy the tree ``source`` to ``target`` as :func:`merge_tree` does (owned by the
    referee, no set-id bits, symbolic links as links, FIFOs and sockets left out), if it
    takes at most ``cap`` bytes there (each entry charged :func:`disk_cost`: a tree of
    empty folders or links is not free); OverCap, with nothing copied, past that. What
    ``target`` held before is removed first."""
    total = 0
    for folder, dirs, names in os.walk(source):
        for name in [*dirs, *names]:
            total += disk_cost(os.lstat(os.path.join(folder, name)))
            if total > cap:
                raise OverCap(f"the build's output would take over {cap >> 20} MiB")
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    target.mkdir(mode=0o755)
    try:
        merge_tree(source, target)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def merge_tree(source: Path, target: Path, *, link: bool = False) -> None:
    """Copy the tree ``source`` into the folder ``target``, entry by entry: an entry
    replaces whatever ``target`` has at its name, unless both are folders (merged). It
    never follows a link, in either tree: a box's links (which may point anywhere on the
    host) are copied as links and only ever replaced, and nothing is written into a
    folder of ``target`` that is not a real folder. What it makes belongs to the caller
    (root, for the referee): folders 0755, files 0755 if any execute bit is set, else
    0644 (no set-id bits: a box's ``chmod 4755`` never makes a set-user-ID program on
    the host); FIFOs, sockets and devices are left out. With ``link``, files are hard
    links to ``source``'s (which must already be such files; copies on another disk).

    ``target`` must be a real folder that no one else writes meanwhile."""
    for entry in os.scandir(source):
        into = os.path.join(target, entry.name)
        info = entry.stat(follow_symlinks=False)
        is_dir = stat.S_ISDIR(info.st_mode)
        try:
            there: os.stat_result | None = os.lstat(into)
        except FileNotFoundError:
            there = None
        if there is not None and not (is_dir and stat.S_ISDIR(there.st_mode)):
            if stat.S_ISDIR(there.st_mode):
                shutil.rmtree(into)
            else:
                os.unlink(into)
            there = None
        if is_dir:
            if there is None:
                os.mkdir(into, 0o755)
                os.chmod(into, 0o755, follow_symlinks=False)  # whatever the umask
            merge_tree(Path(entry.path), Path(into), link=link)
        elif stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(entry.path), into)
        elif stat.S_ISREG(info.st_mode):
            if link:
                try:
                    os.link(entry.path, into, follow_symlinks=False)
                    continue
                except OSError as e:
                    if e.errno != errno.EXDEV:  # another disk: a copy instead
                        raise
            _copy_file(entry.path, into, info)


def _copy_file(source: str, target: str, info: os.stat_result) -> None:
    mode = 0o755 if info.st_mode & 0o111 else 0o644
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            os.fchmod(writing, mode)  # whatever the umask
            while os.sendfile(writing, reading, None, 1 << 20):
                pass
            os.utime(writing, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def _mount(scratch: Path, mib: int) -> None:
    scratch.mkdir(parents=True, exist_ok=True)
    _run(["mount", "-t", "tmpfs", "-o",
          f"size={mib}m,nr_inodes={MAX_FILES},mode=0755,nosuid,nodev", "tmpfs", str(scratch)],
         "cannot mount the capped folder for a build's output")


def _unmount(scratch: Path) -> None:
    _run(["umount", "--lazy", str(scratch)], "cannot unmount a capped folder")
    with contextlib.suppress(OSError):
        scratch.rmdir()


@contextlib.asynccontextmanager
async def capped_folder(scratch: Path, mib: int) -> AsyncIterator[Path]:
    """Mount a tmpfs of ``mib`` MiB (and at most :data:`MAX_FILES` files) on ``scratch``
    (created) and yield it; unmount it on the way out, even when the body raised.
    SandboxError when it cannot be mounted. The mount and the unmount run in worker
    threads, off the event loop."""
    await asyncio.to_thread(_mount, scratch, mib)
    try:
        yield scratch
    finally:
        await asyncio.to_thread(_unmount, scratch)


async def keep(scratch: Path, target: Path, mib: int) -> None:
    """Copy what the capped folder ``scratch`` holds to ``target`` (:func:`copy_capped`,
    in a worker thread): OverCap when it would take more than ``mib`` MiB there."""
    await asyncio.to_thread(copy_capped, scratch, target, mib << 20)
