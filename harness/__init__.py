"""euchre-harness: a gRPC referee, tournament runner and rating tool for Euchre bots."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__version__ = "0.1.0"


SECRET_ENV = ("EUCHRE_OPERATOR_TOKEN",)
"""Variables of the referee's environment that no process it starts is given (a bot,
a Dask worker): the operator's token would give a bot every operator call."""


_secret_names: set[str] = set(SECRET_ENV)


def keep_secret(name: str) -> None:
    """Treat the variable ``name`` as a secret from now on, like :data:`SECRET_ENV`: no
    process the referee starts is given it (a seat's token that ``--bot
    NAME@remote=env:VAR`` read from ``VAR`` would otherwise reach every local bot, which
    could take that seat with it)."""
    _secret_names.add(name)


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment by default) without :data:`SECRET_ENV` and
    the variables given to :func:`keep_secret`: what the referee hands on to a process it
    starts."""
    env = dict(os.environ if base is None else base)
    for name in _secret_names:
        env.pop(name, None)
    return env


def importable_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment by default, without its secrets:
    :func:`child_env`) with ``PYTHONPATH`` starting at the folder this package is
    imported from: what a child process started as ``python -m harness...`` needs to
    import this same checkout."""
    env = child_env(base)
    root = str(Path(__file__).resolve().parent.parent)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = root if not path else f"{root}{os.pathsep}{path}"
    return env
