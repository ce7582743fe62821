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
import os
import shutil
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

from harness.errors import SandboxError

__all__ = ["MAX_FILES", "OverCap", "capped_folder", "copy_capped", "is_full", "keep",
           "mount_points", "unmount_under"]

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


def copy_capped(source: Path, target: Path, cap: int) -> None:
    """Copy the tree ``source`` to ``target`` as ``cp -a`` would (modes, owners, times,
    symbolic links as links; FIFOs and sockets left out), writing at most ``cap`` bytes
    of file contents: OverCap, with no ``target`` left, past that. What ``target`` held
    before is removed first: nothing is ever written through a link already there."""
    if target.is_symlink():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    files: list[tuple[Path, Path]] = []
    folders: list[tuple[Path, Path]] = []
    total = 0
    for folder, dirs, names in os.walk(source):
        here = Path(folder)
        there = target / here.relative_to(source)
        there.mkdir(parents=True)
        folders.append((here, there))
        for name in [*dirs, *names]:
            path = here / name
            info = path.lstat()
            if stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > cap:
                    shutil.rmtree(target, ignore_errors=True)
                    raise OverCap(f"the build's output would take over {cap >> 20} MiB")
                files.append((path, there / name))
            elif stat.S_ISLNK(info.st_mode):
                files.append((path, there / name))
    for path, copy in files:
        if path.is_symlink():
            copy.symlink_to(os.readlink(path))
        else:
            shutil.copyfile(path, copy)
        _same_metadata(path, copy)
    for here, there in reversed(folders):  # a folder's time moves as its files are made
        _same_metadata(here, there)


def _same_metadata(source: Path, target: Path) -> None:
    info = source.lstat()
    os.chown(target, info.st_uid, info.st_gid, follow_symlinks=False)
    shutil.copystat(source, target, follow_symlinks=False)


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
