"""Helpers for the tests of hosted bots: a ladder process whose configuration the test
chooses, bundles of the sample bots, and SubmitBot over real gRPC."""

from __future__ import annotations

import hashlib
import io
import shutil
import sys
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
from configs import PACED_HOUSE, Bot, toml_config
from serve_support import REPO, Started

from harness.cli._ctl_submit import CHUNK_BYTES, pack
from harness.protocol import ladder as lp

OPERATOR_TOKEN = "operator-secret-for-the-submit-tests"

HOUSE = PACED_HOUSE
"""The house bots of a ladder whose house bots play each other: the random and heuristic
sample bots, paced (bench/sleepy_bot.py), since they play for as long as the ladder runs
while its tests wait on builds and uploads."""
QUIET = "[ladder]\nhouse_vs_house = false\n"
"""House bots that play only the hosted and registered bots (not each other): these
play at full speed (configs.RANDOM_AND_HEURISTIC), only when a test's bot does."""


class HostLadder(Started):
    """A running ``euchre-harness -v ladder`` on a free port, with an operator token,
    ``form`` to 3 points, with ``extra`` TOML (a ``[ladder]`` table) and house ``bots``."""

    def __init__(self, folder: Path, extra: str = "", *, bots: Sequence[Bot] = (),
                 name: str = "host-ladder", form: str = "two-handed") -> None:
        self.folder = folder
        self.form = form
        self.config = folder / "ladder.toml"
        if not self.config.exists():
            self.config.write_text(toml_config(
                name, output=folder / "out", concurrency=2, tc="5+30", extra=extra,
                rules={"form": form, "target": 3}, bots=bots))
        self.store = folder / "out" / "ladder.sqlite"
        self.uploads = folder / "out" / "uploads"
        super().__init__([sys.executable, "-m", "harness", "-v", "ladder", str(self.config),
                          "--port", "0"], folder, "ladder",
                         env={"PYTHONPATH": str(REPO), "EUCHRE_OPERATOR_TOKEN": OPERATOR_TOKEN})
        try:
            self.address = self.said("ladder on ")
        except BaseException:
            self.kill()
            raise

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)

    def stored(self) -> set[str]:
        """The sha256 of every bundle in the store's folder."""
        folder = self.uploads / "sha256"
        return {p.name for p in folder.iterdir()} if folder.is_dir() else set()

    def leftovers(self) -> list[Path]:
        """What an upload in progress (or a build) left in ``uploads/tmp``."""
        tmp = self.uploads / "tmp"
        return list(tmp.iterdir()) if tmp.is_dir() else []


def operator() -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {OPERATOR_TOKEN}"),)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def parts(data: bytes, name: str, fmt: str = "tar.gz", *, sha256: str | None = None,
          size: int | None = None, owner: str = "ann",
          chunk: int = CHUNK_BYTES) -> Iterator[lp.SubmitBotRequest]:
    """SubmitBot's messages for ``data``: the header (its size and sha256 unless given),
    then the chunks."""
    yield lp.SubmitBotRequest(header=lp.SubmitHeader(
        name=name, format=lp.BUNDLE_FORMATS[fmt],
        size=len(data) if size is None else size,
        sha256=hashlib.sha256(data).hexdigest() if sha256 is None else sha256, owner=owner))
    for start in range(0, len(data), chunk):
        yield lp.SubmitBotRequest(chunk=data[start:start + chunk])


def submit(channel: grpc.Channel, data: bytes, name: str, fmt: str = "tar.gz", *,
           metadata: tuple[tuple[str, str], ...] | None = None,
           **header: object) -> lp.SubmitBotResponse:
    stub = lp.LadderServiceStub(channel)
    answer: lp.SubmitBotResponse = stub.SubmitBot(
        parts(data, name, fmt, **header),  # type: ignore[arg-type]
        metadata=operator() if metadata is None else metadata, timeout=120)
    return answer


def python_bot(folder: Path, manifest: str | None = None) -> Path:
    """A folder with the random sample bot as a script and its bot.toml."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "sample_bots" / "random_bot.py", folder / "random_bot.py")
    (folder / "bot.toml").write_text(
        manifest or 'runtime = "python"\ncommand = ["python", "random_bot.py"]\n')
    return folder


def tar_gz(folder: Path) -> bytes:
    out = io.BytesIO()
    pack(folder, out)
    return out.getvalue()


def tar_of(entries: Sequence[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A .tar.gz of ``entries``: (name, contents) for files, or ready TarInfos."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                info = tarfile.TarInfo(entry[0])
                info.size = len(entry[1])
                tar.addfile(info, io.BytesIO(entry[1]))
    return out.getvalue()
