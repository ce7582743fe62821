"""What the two upload calls share: a ladder's ``SubmitBot`` (:mod:`harness.ladder.submit`)
and serve's ``SubmitHostedBot`` (:mod:`harness.tournament.hosted`). Both take a header,
then a bundle's bytes in chunks; both allow one upload at a time per bot; both answer a
refusal with the same status codes:

* ``INVALID_ARGUMENT``: a header that is not first, an unknown format, a bundle that is
  not a valid bundle (:class:`~harness.errors.BundleError`);
* ``RESOURCE_EXHAUSTED``: a cap reached (:class:`~harness.errors.UploadLimit`: size,
  disk, a ladder's uploads a day) or another upload of the same bot under way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, NoReturn

import grpc

from harness.errors import BundleError, UploadLimit
from harness.protocol import ladder as lp

__all__ = ["Context", "OneAtATime", "abort", "upload_format"]

Context = grpc.aio.ServicerContext[Any, Any]


async def abort(context: Context, code: grpc.StatusCode, text: str) -> NoReturn:
    """End the call with ``code`` and ``text`` (``context.abort`` raises)."""
    await context.abort(code, text)
    raise AssertionError("not reached: abort raises")


async def upload_format(context: Context, header: lp.SubmitHeader) -> str:
    """The bundle format the header names, or the call ends ``INVALID_ARGUMENT``."""
    try:
        return lp.header_format(header.format)
    except ValueError as e:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(e))


class OneAtATime:
    """The bots with an upload under way: one at a time each."""

    def __init__(self) -> None:
        self._active: set[str] = set()

    @asynccontextmanager
    async def receiving(self, context: Context, base: str) -> AsyncIterator[None]:
        """Hold ``base``'s upload for the block, which receives and stores it. A second
        upload of ``base`` meanwhile, an UploadLimit or a BundleError in the block end
        the call with their status; nothing else is caught."""
        if base in self._active:
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"an upload of {base} is in progress: one at a time")
        self._active.add(base)
        try:
            yield
        except UploadLimit as e:
            await abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, str(e))
        except BundleError as e:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(e))
        finally:
            self._active.discard(base)
