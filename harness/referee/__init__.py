"""The gRPC referee: server, sessions, bot processes and the game runner."""

import os

# The referee forks bot processes while gRPC threads run; gRPC's fork handlers would only
# log a warning for each spawn, and the children exec at once, so they are not needed.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
