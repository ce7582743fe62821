"""The seccomp filter of a box (harness.sandbox.seccomp): in a real box, the kernel's
keyrings are refused (no keys shared between boxes, none of the referee's read), and so
is the 32-bit ABI that would go round the filter; ordinary work still runs, and the
filter's file descriptor does not reach the box. Then the filter program itself."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import errno
import json
import os
import secrets
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sandbox_support import bot_folder, require_boxes
from waiting import wait_until

from harness.errors import SandboxUnavailable
from harness.sandbox import BoxLimits, box, mounts, seccomp

pytestmark = pytest.mark.timeout(120)

T = TypeVar("T")

KEY_SPEC_SESSION_KEYRING = -3
KEY_SPEC_USER_KEYRING = -4
KEYCTL_GET_KEYRING_ID = 0
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_SEARCH = 10
KEYCTL_READ = 11

# What a boxed program starts with: the keyring calls through libc's syscall(), each
# giving [result, errno], and ``report`` to print what it found as one line of JSON.
PROLOGUE = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {nr}
def call(name, *args):
    ctypes.set_errno(0)
    wrapped = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = libc.syscall(ctypes.c_long(NR[name]), *wrapped)
    return [result, ctypes.get_errno() if result < 0 else 0]
def read(key):
    buffer = ctypes.create_string_buffer(4096)
    result, _ = call("keyctl", {read}, key, buffer, len(buffer))
    return buffer.raw[:max(result, 0)].decode(errors="replace") if result >= 0 else None
def readable(path):
    try:
        return open(path).read()
    except OSError as e:
        return e.errno
def report(**found):
    print(json.dumps(found), flush=True)
"""


@pytest.fixture
def boxes() -> None:
    require_boxes()


def native_numbers() -> dict[str, int]:
    return dict(seccomp.abi().denied)


def boxed_python(tmp_path: Path, name: str, code: str) -> dict[str, Any]:
    """Run ``code`` (after :data:`PROLOGUE`) with this Python in a box of its own; what
    it reported."""
    files = bot_folder(tmp_path / name)
    program = PROLOGUE.format(nr=native_numbers(), read=KEYCTL_READ) + code

    async def main() -> dict[str, Any]:
        async with box.Box(name, files, BoxLimits(), None) as boxed_:
            proc = await boxed_.start([sys.executable, "-c", program], {})
            assert proc.stdout is not None
            output = await asyncio.wait_for(proc.stdout.read(), 60)
            status = await asyncio.wait_for(proc.wait(), 60)
            assert status == 0, output.decode(errors="replace")
            found: dict[str, Any] = json.loads(output.decode().splitlines()[-1])
            return found
    return asyncio.run(main())


def test_a_box_cannot_keep_a_key_for_a_later_box(boxes: None, tmp_path: Path) -> None:
    # Every box is nobody, and nobody's user keyring outlives its processes: a key that
    # one box stores there, the next one (another bot, or the same bot's next game)
    # would find. The filter refuses every keyring call with EPERM.
    description = f"euchre-note-{secrets.token_hex(8)}"
    stored = boxed_python(tmp_path, "keeper", f"""
description = {description!r}.encode()
added = call("add_key", b"user", description, b"my hand: JH JD AS", 17, {KEY_SPEC_USER_KEYRING})
if added[0] > 0:  # no filter: let the key expire rather than stay with nobody
    call("keyctl", 15, added[0], 60)  # KEYCTL_SET_TIMEOUT
report(added=added,
       requested=call("request_key", b"user", description, None, {KEY_SPEC_USER_KEYRING}),
       user_keyring=call("keyctl", {KEYCTL_GET_KEYRING_ID}, {KEY_SPEC_USER_KEYRING}, 0))
""")
    found = boxed_python(tmp_path, "finder", f"""
found = call("keyctl", {KEYCTL_SEARCH}, {KEY_SPEC_USER_KEYRING}, b"user",
             {description!r}.encode(), 0)
payload = read(found[0]) if found[0] > 0 else None
if found[0] > 0:
    call("keyctl", 21, found[0])  # KEYCTL_INVALIDATE: leave nobody's keyring as it was
report(found=found, payload=payload)
""")
    refused = [-1, errno.EPERM]
    assert {"stored": stored, "found": found} == {
        "stored": {"added": refused, "requested": refused, "user_keyring": refused},
        "found": {"found": refused, "payload": None}}


def in_own_session_keyring(secret: bytes, description: bytes, work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own that has joined a new session keyring holding
    ``secret`` (a user key named ``description``), as a referee's keyring may hold root's
    keys. Each thread has its own credentials: the test's other threads, and the
    keyring it had, are not touched; the new keyring goes with the thread."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = native_numbers()

    def run() -> T:
        joined = libc.syscall(ctypes.c_long(nr["keyctl"]),
                              ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None)
        assert joined > 0, os.strerror(ctypes.get_errno())
        key = libc.syscall(ctypes.c_long(nr["add_key"]), b"user", description, secret,
                           ctypes.c_long(len(secret)), ctypes.c_long(KEY_SPEC_SESSION_KEYRING))
        assert key > 0, os.strerror(ctypes.get_errno())
        return work()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(run).result()


def test_a_box_cannot_read_the_referees_session_keyring(boxes: None, tmp_path: Path) -> None:
    # A box inherits the session keyring of the process that starts it, and possesses
    # it: without the filter, nobody could read root's keys there.
    secret = f"root-secret-{secrets.token_hex(16)}"
    description = f"euchre-referee-{secrets.token_hex(8)}"
    found = in_own_session_keyring(secret.encode(), description.encode(), lambda: boxed_python(
        tmp_path, "reader", f"""
found = call("keyctl", {KEYCTL_SEARCH}, {KEY_SPEC_SESSION_KEYRING}, b"user",
             {description!r}.encode(), 0)
report(session=call("keyctl", {KEYCTL_GET_KEYRING_ID}, {KEY_SPEC_SESSION_KEYRING}, 0),
       found=found, payload=read(found[0]) if found[0] > 0 else None,
       listed=read({KEY_SPEC_SESSION_KEYRING}),
       proc_keys=readable("/proc/keys"), key_users=readable("/proc/key-users"))
"""))
    # /proc/keys lists the keys a process may view, names included, without a keyring
    # call: a box cannot read it (a device it may not open is bound over it).
    assert found == {"session": [-1, errno.EPERM], "found": [-1, errno.EPERM],
                     "payload": None, "listed": None, "proc_keys": errno.EACCES,
                     "key_users": errno.EACCES}


# i386's keyctl (288) through int 0x80, which a 64-bit process may use where the kernel
# emulates 32-bit x86: push rbx; mov eax, 288; mov ebx, 0 (KEYCTL_GET_KEYRING_ID);
# mov ecx, -3 (the session keyring); mov edx, 0; int 0x80; pop rbx; ret. Its numbers are
# not the native ones, so only the filter's check of the ABI stops it.
I386_KEYCTL = (b"\x53\xb8" + struct.pack("<I", 288) + b"\xbb\x00\x00\x00\x00\xb9"
               + struct.pack("<i", KEY_SPEC_SESSION_KEYRING)
               + b"\xba\x00\x00\x00\x00\xcd\x80\x5b\xc3")


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="32-bit x86 is x86_64's only")
def test_a_box_cannot_go_round_the_filter_through_the_32_bit_abi(boxes: None,
                                                                 tmp_path: Path) -> None:
    found = boxed_python(tmp_path, "i386", f"""
import mmap
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write({I386_KEYCTL!r})
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
report(session=ctypes.CFUNCTYPE(ctypes.c_int)(address)())
""")
    assert found == {"session": -errno.ENOSYS}


def test_ordinary_work_still_runs_in_a_box(boxes: None, tmp_path: Path) -> None:
    # Files, threads, a child process, pipes, time: what a bot does, under the filter.
    found = boxed_python(tmp_path, "worker", """
import subprocess, threading, time, tempfile
with tempfile.NamedTemporaryFile("w+", dir="/tmp") as f:
    f.write("kept"); f.flush(); f.seek(0); text = f.read()
done = []
thread = threading.Thread(target=lambda: done.append(sum(range(1000))))
thread.start(); thread.join()
child = subprocess.run(["/bin/sh", "-c", "echo $((6 * 7))"], capture_output=True, text=True)
report(text=text, done=done, child=child.stdout.strip(), uid=os.getuid(),
       clock=time.monotonic() > 0)
""")
    assert found == {"text": "kept", "done": [499500], "child": "42", "uid": 65534,
                     "clock": True}


def test_a_box_gets_no_descriptor_but_its_standard_three(boxes: None, tmp_path: Path) -> None:
    # Bubblewrap reads the environment's and the filter's memfds and closes them: the
    # boxed process has 0, 1 and 2 only (looked at from outside, which opens nothing in
    # the box). A program opens files of its own while it starts (`sleep` its locale's),
    # so the box is looked at until its program has settled: a descriptor it inherited
    # would be there at every look, and one of the memfds at any look fails at once.
    files = bot_folder(tmp_path / "src")

    def look(group_pids: list[int]) -> dict[int, tuple[str, dict[str, str]]]:
        seen: dict[int, tuple[str, dict[str, str]]] = {}
        for pid in group_pids:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                status = Path(f"/proc/{pid}/status").read_text()
                uid = next(line.split()[1] for line in status.splitlines()
                           if line.startswith("Uid:"))
                if uid != str(mounts.NOBODY):
                    continue
                assert "Seccomp:\t2" in status  # filtered
                fds: dict[str, str] = {}
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    with contextlib.suppress(FileNotFoundError):  # closed meanwhile
                        fds[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
                seen[pid] = (os.readlink(f"/proc/{pid}/exe"), fds)
        return seen

    def only_standard(seen: dict[int, tuple[str, dict[str, str]]]) -> bool:
        return bool(seen) and all(sorted(fds) == ["0", "1", "2"] for _, fds in seen.values())

    async def main() -> dict[int, tuple[str, dict[str, str]]]:
        async with box.Box("descriptors", files, BoxLimits(), None) as boxed_:
            proc = await boxed_.start(["/bin/sh", "-c", "echo up; exec sleep 60"], {})
            assert proc.stdout is not None
            assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"up\n"
            group = boxed_.group
            assert group is not None
            seen: dict[int, tuple[str, dict[str, str]]] = {}

            def settled() -> bool:
                seen.clear()
                seen.update(look(group.members()))
                targets = [t for _, fds in seen.values() for t in fds.values()]
                assert not any("memfd:" in t for t in targets), seen
                return only_standard(seen) and all(exe.endswith("/sleep")
                                                   for exe, _ in seen.values())

            await wait_until(settled, "the boxed sleep with descriptors 0, 1 and 2 only",
                             60, detail=lambda: seen, interval=0.01)
            return seen
    assert only_standard(asyncio.run(main()))


# The filter program itself.

def run_filter(code: bytes, nr: int, arch: int) -> int:
    """What the classic BPF program ``code`` returns for a system call ``nr`` of ABI
    ``arch`` (the few instructions the filter uses)."""
    program = list(seccomp.SOCK_FILTER.iter_unpack(code))
    data = struct.pack("=iI", nr, arch) + bytes(56)  # struct seccomp_data
    a, pc = 0, 0
    for _ in range(len(program)):
        op, jt, jf, k = program[pc]
        pc += 1
        if op == seccomp.LD_W_ABS:
            (a,) = struct.unpack_from("=I", data, k)
        elif op == seccomp.JEQ_K:
            pc += jt if a == k else jf
        elif op == seccomp.JGE_K:
            pc += jt if a >= k else jf
        elif op == seccomp.RET_K:
            return int(k)
        else:
            raise AssertionError(f"unexpected opcode {op:#x}")
    raise AssertionError("the program ran off its end")


@pytest.mark.parametrize("machine", sorted(seccomp.ABIS))
def test_the_filter_denies_the_keyrings_and_every_other_abi(machine: str) -> None:
    code = seccomp.program(machine)
    native = seccomp.ABIS[machine]
    instructions = list(seccomp.SOCK_FILTER.iter_unpack(code))
    assert len(code) == 8 * len(instructions)
    # load arch, check it, load nr, (x32 bit), one check per denied call, three returns
    assert len(instructions) == 3 + native.x32_bit + len(native.denied) + 3
    assert instructions[0] == (seccomp.LD_W_ABS, 0, 0, seccomp.ARCH_OFFSET)
    assert [op for op, *_ in instructions[-3:]] == [seccomp.RET_K] * 3
    returns = [k for _, _, _, k in instructions[-3:]]
    allow = seccomp.SECCOMP_RET_ALLOW
    deny = seccomp.SECCOMP_RET_ERRNO | errno.EPERM
    refuse = seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS
    assert returns == [allow, deny, refuse]
    checked = {k for op, _, _, k in instructions if op == seccomp.JEQ_K}
    assert set(native.denied.values()) | {native.audit_arch} == checked
    for at, (op, jt, jf, _) in enumerate(instructions):
        if op != seccomp.RET_K:  # every jump lands inside the program
            assert at + 1 + max(jt, jf) < len(instructions)

    for name, nr in native.denied.items():
        assert run_filter(code, nr, native.audit_arch) == deny, name
    for nr in (0, 1, 59, 60, 231, 247, 251, 435, 500):  # read, write, ..., clone3
        if nr not in native.denied.values():
            assert run_filter(code, nr, native.audit_arch) == allow, nr
    for arch in (0x40000003, 0x40000028, 0):  # AUDIT_ARCH_I386, AUDIT_ARCH_ARM, none
        assert run_filter(code, 39, arch) == refuse
    x32 = run_filter(code, seccomp.X32_SYSCALL_BIT | 39, native.audit_arch)
    assert x32 == (refuse if native.x32_bit else allow)


def test_the_filter_is_in_this_machines_byte_order() -> None:
    first = seccomp.program("x86_64")[:8]
    assert first == struct.pack("=HBBI", 0x20, 0, 0, 4)
    assert int.from_bytes(first[:2], sys.byteorder) == 0x20


def test_a_machine_without_a_filter_runs_no_box(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable) as err:
        seccomp.program("riscv64")
    assert "riscv64" in str(err.value) and "\n" not in str(err.value)
    real = os.uname()
    fake = os.uname_result((real.sysname, real.nodename, real.release, real.version, "s390x"))
    monkeypatch.setattr(os, "uname", lambda: fake)
    monkeypatch.setattr(box, "_tool", lambda name, fallback: fallback)  # bwrap or not
    seccomp.program.cache_clear()
    box._machine.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as err:
            box.check_available()
        message = str(err.value)
        assert "seccomp" in message and "s390x" in message and "\n" not in message
    finally:
        monkeypatch.undo()
        seccomp.program.cache_clear()
        box._machine.cache_clear()
