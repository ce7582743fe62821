"""The file system and namespaces of a box, as a bubblewrap (``bwrap``) command line.

Inside a box a bot sees:

* the system's programs and libraries read-only: ``/usr`` and ``/bin``, ``/sbin``,
  ``/lib*`` (bound, or the same symlinks into ``/usr`` as the host has), and a few files
  of ``/etc`` that programs need to start (the dynamic linker's cache, the alternatives
  links, the time zone), never the rest of ``/etc``;
* the runtimes it needs read-only, each at its own path (a Python virtual environment,
  say), and the harness's Python package at :data:`SDK_DIR` (``PYTHONPATH`` points there);
* no readable ``/proc/keys`` or ``/proc/key-users`` (the keys it could view, by name);
* its own files read-only at :data:`BOT_DIR` (its working directory), and a build's
  output at :data:`OUT_DIR` (writable during the build, read-only when it plays);
* a private ``/tmp`` (tmpfs, capped in size, also its ``HOME``), a minimal ``/dev``
  (null, zero, full, random, urandom, tty, shm) and a ``/proc`` that shows only its own
  processes;
* the referee's socket directory, read-only, at :data:`SOCKET_DIR`.

It runs in new PID, IPC, UTS, cgroup and network namespaces (the network namespace has
only a loopback device that nothing listens on: no network at all), in a new session (so
it cannot push keystrokes into the referee's terminal), with an environment that holds
only :data:`BASE_ENV` and what the caller adds, as user and group ``nobody`` (65534)
with no capabilities and ``no_new_privs``, under a seccomp filter that refuses the
kernel's keyrings and every system call of another ABI (:mod:`harness.sandbox.seccomp`).
It dies with the referee.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

BOT_DIR = "/bot"
OUT_DIR = "/out"
SOCKET_DIR = "/run/euchre"
SDK_DIR = "/opt/euchre/python"
NOBODY = 65534

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
             "/etc/localtime", "/etc/nsswitch.conf")

BASE_ENV: Mapping[str, str] = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONPATH": SDK_DIR,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
"""The whole environment of a boxed process, besides what its caller adds (the referee's
address, the bot's token and name)."""


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ETC_FILES:
        args += ["--ro-bind-try", f, f]
    return args


class _Tree:
    """Directories made so far inside the box: each parent of a mount point is made once,
    world-traversable (bubblewrap would make it private to root)."""

    def __init__(self) -> None:
        self.made: set[str] = {"/"}

    def parents(self, target: str) -> list[str]:
        args: list[str] = []
        for parent in reversed(PurePosixPath(target).parents):
            p = str(parent)
            if p not in self.made:
                self.made.add(p)
                args += ["--perms", "0755", "--dir", p]
        self.made.add(target)
        return args

    def bind(self, flag: str, source: Path | str, target: str) -> list[str]:
        """``flag source target`` (a bwrap bind option), its parents made first."""
        return [*self.parents(target), flag, str(source), target]


def env_args(env: Mapping[str, str] | None = None) -> bytes:
    """The options that give a box its environment, :data:`BASE_ENV` updated with
    ``env``, NUL-separated, for bubblewrap to read from the file descriptor that
    :func:`bwrap_args` names (``--args FD``): on bubblewrap's command line a value (the
    bot's token) would be there for every user of the machine to read in ``ps``."""
    args = ["--clearenv"]
    for key, value in {**BASE_ENV, **(env or {})}.items():
        args += ["--setenv", key, value]
    return b"".join(arg.encode() + b"\0" for arg in args)


def bwrap_args(*, files: Path, tmp_mib: int, env_fd: int, seccomp_fd: int,
               socket_dir: Path | None = None, writable: Path | None = None,
               outputs: Path | None = None, runtimes: Sequence[Path] = (),
               sdk: Path | None = None, cwd: str = BOT_DIR, bwrap: str = "bwrap",
               setpriv: str = "/usr/bin/setpriv") -> list[str]:
    """The ``bwrap ... setpriv ... --`` prefix of a boxed command (append its argv).

    ``files`` is bound read-only at :data:`BOT_DIR`; ``writable`` read-write at
    :data:`OUT_DIR` (a build), else ``outputs`` read-only there (a build's result);
    ``socket_dir`` read-only at :data:`SOCKET_DIR`; each of ``runtimes`` read-only at its
    own path; ``sdk`` (the harness package's directory) read-only at
    :data:`SDK_DIR`/harness. The environment comes from ``env_fd``, an open file
    descriptor (inherited by bubblewrap, which reads and closes it) that holds
    :func:`env_args`; the seccomp filter from ``seccomp_fd``, another such descriptor,
    that holds :func:`harness.sandbox.seccomp.program`.
    """
    tree = _Tree()
    args = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
            "--unshare-cgroup-try", "--hostname", "box", "--die-with-parent",
            "--new-session"]
    args += _system_binds()
    for path in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"):
        tree.made.add(path)
    args += ["--proc", "/proc", "--dev", "/dev"]
    # The kernel lists the keys a process may view in /proc/keys, beyond the keyring
    # calls that the seccomp filter refuses: the names of the referee's session keys.
    args += ["--ro-bind", "/dev/null", "/proc/keys", "--ro-bind", "/dev/null",
             "/proc/key-users"]
    tree.made.update({"/proc", "/dev"})
    args += ["--perms", "1777", "--size", str(tmp_mib << 20), "--tmpfs", "/tmp"]
    tree.made.add("/tmp")
    for runtime in _outermost(runtimes):
        args += tree.bind("--ro-bind", runtime, str(runtime))
    if sdk is not None:
        args += tree.bind("--ro-bind", sdk, f"{SDK_DIR}/harness")
    args += tree.bind("--ro-bind", files, BOT_DIR)
    if writable is not None:
        args += tree.bind("--bind", writable, OUT_DIR)
    elif outputs is not None:
        args += tree.bind("--ro-bind", outputs, OUT_DIR)
    if socket_dir is not None:
        args += tree.bind("--ro-bind", socket_dir, SOCKET_DIR)
    args += ["--args", str(env_fd), "--seccomp", str(seccomp_fd)]
    args += ["--chdir", cwd, "--", setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}",
             "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
             "--"]
    return args


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another one, and without system directories
    (already bound)."""
    resolved = sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in resolved:
        if any(p == Path(s) or Path(s) in p.parents for s in SYSTEM_DIRS):
            continue
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    return kept
