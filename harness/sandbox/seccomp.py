"""The system calls a box refuses, as a seccomp filter that bubblewrap loads (``--seccomp
FD``) just before it runs the box's command.

Denied, with ``EPERM``: the kernel's keyrings (``add_key``, ``request_key``, ``keyctl``).
Every box runs as the same user (``nobody``), and a user's keyring outlives its
processes: without this, one box could leave keys there for a later box to read (two
bots sharing their hands, a bot keeping notes from one game to the next) or use up
``nobody``'s key quota for every box; and a box would inherit the referee's session
keyring, with root's keys in it.

Refused, with ``ENOSYS``: every system call made through another ABI than the machine's
own (32-bit x86 and x32 on x86_64, 32-bit ARM on aarch64), whose numbers differ and which
the filter above would not see. Boxes run only where a filter is defined here (x86_64
and aarch64); :func:`program` raises :class:`~harness.errors.SandboxUnavailable`
elsewhere, and no box runs without its filter.

The filter is a classic BPF program over ``struct seccomp_data`` (``<linux/seccomp.h>``),
assembled here: an array of ``struct sock_filter`` in the machine's byte order.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import struct
from collections.abc import Mapping

from harness.errors import SandboxUnavailable

SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
NR_OFFSET = 0
ARCH_OFFSET = 4

# Classic BPF opcodes (<linux/bpf_common.h>).
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: if A == k jump jt, else jf
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K: if A >= k jump jt, else jf
RET_K = 0x06  # BPF_RET | BPF_K: return k

SOCK_FILTER = struct.Struct("=HBBI")
"""``struct sock_filter``: u16 code, u8 jt, u8 jf, u32 k, native byte order."""

Instruction = tuple[int, int, int, int]


@dataclasses.dataclass(frozen=True)
class Abi:
    """A machine's native system-call ABI: its ``AUDIT_ARCH_*`` value, the numbers of the
    calls a box may not make, and whether numbers with the x32 bit set must be refused
    (x86_64, where x32 calls share the native ``arch``)."""

    audit_arch: int
    denied: Mapping[str, int]
    x32_bit: bool = False


ABIS: Mapping[str, Abi] = {
    "x86_64": Abi(AUDIT_ARCH_X86_64, {"add_key": 248, "request_key": 249, "keyctl": 250},
                  x32_bit=True),
    "aarch64": Abi(AUDIT_ARCH_AARCH64, {"add_key": 217, "request_key": 218, "keyctl": 219}),
}
"""Each machine (``uname -m``) that boxes run on."""


def abi(machine: str | None = None) -> Abi:
    """The ABI of ``machine`` (default: this one's), or SandboxUnavailable in one line."""
    machine = os.uname().machine if machine is None else machine
    found = ABIS.get(machine)
    if found is None:
        raise SandboxUnavailable(f"boxed bots need a seccomp filter for this machine's "
                                 f"architecture, {machine}; there is one for "
                                 f"{' and '.join(ABIS)} only")
    return found


def instructions(machine: str | None = None) -> list[Instruction]:
    """The filter for ``machine`` (default: this one), as ``(code, jt, jf, k)``."""
    native = abi(machine)
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    refuse = SECCOMP_RET_ERRNO | errno.ENOSYS
    # Jumps are relative to the next instruction; the two ends are "deny" and "refuse",
    # the last two instructions, so each jump's length is counted back from the end.
    body: list[tuple[int, str | None, str | None, int]] = [
        (LD_W_ABS, None, None, ARCH_OFFSET),
        (JEQ_K, None, "refuse", native.audit_arch),
        (LD_W_ABS, None, None, NR_OFFSET),
    ]
    if native.x32_bit:
        body.append((JGE_K, "refuse", None, X32_SYSCALL_BIT))
    body += [(JEQ_K, "deny", None, nr) for nr in native.denied.values()]
    body.append((RET_K, None, None, SECCOMP_RET_ALLOW))
    ends = {"deny": len(body), "refuse": len(body) + 1}

    def jump(at: int, to: str | None) -> int:
        return 0 if to is None else ends[to] - (at + 1)

    program = [(code, jump(i, jt), jump(i, jf), k) for i, (code, jt, jf, k) in enumerate(body)]
    return [*program, (RET_K, 0, 0, deny), (RET_K, 0, 0, refuse)]


@functools.cache
def program(machine: str | None = None) -> bytes:
    """The filter for ``machine`` (default: this one) as bubblewrap reads it from
    ``--seccomp FD``: the array of ``struct sock_filter``. SandboxUnavailable on a
    machine without one."""
    return b"".join(SOCK_FILTER.pack(*ins) for ins in instructions(machine))
