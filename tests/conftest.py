"""Test setup shared by every test module."""

import os

# Tests start bot processes from a process that uses gRPC (see harness/referee/__init__.py).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
