"""Boxes for bots and builds: bubblewrap for what a process can see, cgroups for what it
can use (see docs/hosting.md).

* :mod:`harness.sandbox.cgroups`: one control group per box (v1 or v2): limits, CPU time,
  OOM kills, killing every member.
* :mod:`harness.sandbox.mounts`: the box's files, namespaces and user, as a bwrap
  command line.
* :mod:`harness.sandbox.seccomp`: the system calls a box refuses (the kernel's keyrings,
  other ABIs), as the seccomp filter bubblewrap loads.
* :mod:`harness.sandbox.scratch`: a build's ``/out``, a tmpfs of capped size mounted
  for the build and copied to the disk after it.
* :mod:`harness.sandbox.box`: :class:`Box`, :class:`BoxLimits`, :func:`run_build`,
  :func:`check_available`.
"""

from harness.sandbox.box import (
    BOX_ADDRESS,
    SOCKET_NAME,
    Box,
    BoxLimits,
    BuildOutcome,
    check_available,
    run_build,
    spare_cpus,
)

__all__ = ["BOX_ADDRESS", "SOCKET_NAME", "Box", "BoxLimits", "BuildOutcome",
           "check_available", "run_build", "spare_cpus"]
