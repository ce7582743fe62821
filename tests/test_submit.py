"""Submitting hosted bots to a running ladder over real gRPC (``SubmitBot``) and with
``euchre-harness ctl submit``: folders, .tar.gz and .zip bundles in chunks; the size cap,
the sha256 and the owner's token checked; bad manifests and hostile archives refused
with nothing left on disk; a ladder killed mid-upload keeps only what was finished.

These tests need no sandbox: they stop where a bot would be built or played (see
tests/test_hosted_play.py for that)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import subprocess
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from cli_support import harness_command
from serve_support import REPO, end
from submit_support import (
    OPERATOR_TOKEN,
    HostLadder,
    bearer,
    parts,
    python_bot,
    submit,
    tar_gz,
    tar_of,
)

from harness.errors import UploadLimit
from harness.hosting import build as hosting_build
from harness.hosting.build import BUILD_LIMITS, BuildPolicy
from harness.hosting.bundle import Manifest
from harness.hosting.files import BundleFiles, Hosted
from harness.protocol import ladder as lp

CAP_MIB = 2
PER_DAY = 10  # the ladder's default submissions_per_day


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostLadder]:
    """One ladder without house bots (nothing plays), bundles capped at 2 MiB."""
    running = HostLadder(tmp_path_factory.mktemp("submit"),
                         f"[ladder]\nupload_max_mib = {CAP_MIB}\n")
    try:
        yield running
    finally:
        running.kill()


def ctl(ladder: HostLadder, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return harness_command("ctl", "--address", ladder.address, *args, cwd=REPO,
                           env={**ladder.env, "EUCHRE_OPERATOR_TOKEN": OPERATOR_TOKEN,
                                **(env or {})})


def refusal(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def zip_of(folder: Path) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            z.write(path, path.relative_to(folder).as_posix())
    return out.getvalue()


def test_a_folder_a_tar_gz_and_a_zip_are_submitted_as_versions(
        ladder: HostLadder, tmp_path: Path) -> None:
    folder = python_bot(tmp_path / "bot")
    # The operator submits a folder: a new bot, version 1, with its token shown once.
    first = ctl(ladder, "submit", "pyfolder", str(folder), "--owner", "ann")
    assert first.returncode == 0, first.stderr
    name, token = first.stdout.split()
    assert name == "pyfolder:" and token.startswith("eh_")
    assert "ready" in first.stderr and "shown only once" in first.stderr
    # The bot's own token submits a .tar.gz: version 2, whose token replaces it.
    archive = tmp_path / "bot.tar.gz"
    (folder / "extra.txt").write_text("a second version\n")
    archive.write_bytes(tar_gz(folder))
    second = ctl(ladder, "--json", "submit", "pyfolder", str(archive),
                 env={"EUCHRE_BOT_TOKEN": token, "EUCHRE_OPERATOR_TOKEN": ""})
    assert second.returncode == 0, second.stderr
    answer = json.loads(second.stdout)
    assert answer["name"] == "pyfolder@2" and answer["build_state"] == "ready"
    # The older version is retired, so its token no longer submits.
    stale = ctl(ladder, "submit", "pyfolder", str(archive),
                env={"EUCHRE_BOT_TOKEN": token, "EUCHRE_OPERATOR_TOKEN": ""})
    assert stale.returncode == 2 and "permission denied" in stale.stderr
    # A .zip, over gRPC in small chunks, with version 2's token: version 3.
    with ladder.channel() as channel:
        third = submit(channel, zip_of(folder), "pyfolder", "zip",
                       metadata=bearer(answer["token"]), chunk=1000)
    assert third.bot.name == "pyfolder@3" and third.bot.hosted
    assert third.bot.build_state == "ready"
    # Each bundle is stored by its content, unpacked, next to the store.
    stored = ladder.uploads / "sha256" / third.sha256
    assert (stored / "files" / "bot.toml").is_file()
    assert (stored / "files" / "extra.txt").read_text() == "a second version\n"
    assert {answer["sha256"], third.sha256} <= ladder.stored()
    assert ladder.leftovers() == []
    # The standings list the three versions with their build state; the token shows
    # nowhere but in the answers.
    table = ctl(ladder, "--json", "standings")
    rows = {r["name"]: r for r in json.loads(table.stdout)["standings"]}
    assert {rows[n]["build"] for n in ("pyfolder", "pyfolder@2", "pyfolder@3")} == {"ready"}
    assert rows["pyfolder"]["owner"] == "ann"
    assert token not in ladder.stderr


def test_a_wrong_sha256_or_size_is_refused_and_leaves_nothing(ladder: HostLadder,
                                                               tmp_path: Path) -> None:
    data = tar_gz(python_bot(tmp_path / "bot"))
    before = ladder.stored()
    with ladder.channel() as channel:
        wrong = refusal(lambda: submit(channel, data, "badsum", sha256="0" * 64))
        assert wrong.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "sha256 mismatch" in (wrong.details() or "")
        short = refusal(lambda: submit(channel, data, "badsize", size=len(data) + 1))
        assert short.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert f"ended after {len(data)} bytes" in (short.details() or "")
        long = refusal(lambda: submit(channel, data, "badsize", size=len(data) - 1))
        assert "longer than" in (long.details() or "")
        standings = lp.LadderServiceStub(channel).GetStandings(
            lp.GetStandingsRequest(), metadata=bearer(OPERATOR_TOKEN), timeout=60)
    assert not {"badsum", "badsize"} & {s.name for s in standings.standings}
    assert ladder.stored() == before and ladder.leftovers() == []


def test_a_bundle_over_the_cap_is_refused(ladder: HostLadder, tmp_path: Path) -> None:
    big = python_bot(tmp_path / "big")
    (big / "noise.bin").write_bytes(os.urandom((CAP_MIB << 20) + 1000))
    data = tar_gz(big)
    with ladder.channel() as channel:
        declared = refusal(lambda: submit(channel, data, "toobig"))
        assert declared.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert f"over this referee's cap of {CAP_MIB << 20} bytes" in (declared.details() or "")
        # A header that understates the size is stopped at the cap all the same.
        lying = refusal(lambda: submit(channel, data, "toobig", size=1000))
        assert lying.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                                grpc.StatusCode.RESOURCE_EXHAUSTED)
    done = ctl(ladder, "submit", "toobig", str(big))
    assert done.returncode == 2 and "resource_exhausted" in done.stderr
    assert ladder.leftovers() == []


def test_tokens_submit_their_own_bot_only(ladder: HostLadder, tmp_path: Path) -> None:
    data = tar_gz(python_bot(tmp_path / "bot"))
    with ladder.channel() as channel:
        mine = submit(channel, data, "alice-bot")
        theirs = submit(channel, data, "bob-bot", owner="bob")
        other = refusal(lambda: submit(channel, data, "bob-bot",
                                       metadata=bearer(mine.token)))
        assert other.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "only its own bot" in (other.details() or "")
        new = refusal(lambda: submit(channel, data, "carol-bot", metadata=bearer(mine.token)))
        assert new.code() == grpc.StatusCode.PERMISSION_DENIED
        nobody = refusal(lambda: submit(channel, data, "alice-bot",
                                        metadata=bearer("eh_0123456789abcdef_" + "x" * 43)))
        assert nobody.code() == grpc.StatusCode.PERMISSION_DENIED
        logs = lp.LadderServiceStub(channel)
        peek = refusal(lambda: logs.GetBuildLog(lp.GetBuildLogRequest(name="bob-bot"),
                                                metadata=bearer(mine.token), timeout=60))
        assert peek.code() == grpc.StatusCode.PERMISSION_DENIED
        own = logs.GetBuildLog(lp.GetBuildLogRequest(name="bob-bot"),
                               metadata=bearer(theirs.token), timeout=60)
        assert own.build_state == "ready" and own.log == ""
        again = submit(channel, data, "alice-bot", metadata=bearer(mine.token))
    assert again.bot.name == "alice-bot@2" and again.bot.owner == "ann"


@pytest.mark.parametrize(("manifest", "error"), [
    (None, "the bundle has no bot.toml at its top"),
    ('runtime = "python"\ncommand = ["python", "bot.py"]\nnetwork = true\n',
     "bot.toml: unknown key 'network'"),
    ('runtime = "java"\ncommand = ["java", "Bot"]\n',
     "bot.toml: runtime must be one of python, node, native; got 'java'"),
    ('runtime = "python"\n', "bot.toml: command is missing"),
    ('runtime = "python"\ncommand = "python bot.py"\n',
     "bot.toml: command must be a non-empty array of strings"),
    ('runtime = "python"\ncommand = ["ruby", "bot.rb"]\n',
     "a python bot's command starts with \"python\""),
    ('runtime = "native"\ncommand = ["/bin/sh", "bot.sh"]\n',
     "a native bot's command starts with the relative path of its executable"),
    ('runtime = "native"\ncommand = ["./bot"]\n',
     "the command './bot' is not an executable file of the bundle"),
    ('runtime = "python"\ncommand = ["python", "bot.py"]\nbuild = []\n',
     "bot.toml: build must be a non-empty array of strings"),
    ('runtime = "python\ncommand = []\n', "bot.toml is not valid TOML"),
])
def test_bad_manifests_are_refused_with_the_reason(ladder: HostLadder, tmp_path: Path,
                                                   manifest: str | None, error: str) -> None:
    files = [("bot.py", b"print('hello')\n")]
    if manifest is not None:
        files.append(("bot.toml", manifest.encode()))
    before = ladder.stored()
    with ladder.channel() as channel:
        refused = refusal(lambda: submit(channel, tar_of(files), "manifest-bot"))
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error in (refused.details() or ""), refused.details()
    assert ladder.stored() == before and ladder.leftovers() == []


def _member(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


MANIFEST = ("bot.toml", b'runtime = "python"\ncommand = ["python", "bot.py"]\n')


def _zip_with(name: str, data: bytes, mode: int = 0o100644) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.toml", MANIFEST[1])
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, data)
    return out.getvalue()


HOSTILE = {
    "dot-dot": ("tar.gz", tar_of([MANIFEST, ("../escaped.txt", b"x")]), "unsafe path"),
    "absolute": ("tar.gz", tar_of([MANIFEST, ("/escaped.txt", b"x")]), "unsafe path"),
    "symlink-out": ("tar.gz", tar_of([MANIFEST, _member("link", tarfile.SYMTYPE, "../..")]),
                    "points outside the bundle"),
    "symlink-absolute": ("tar.gz", tar_of([MANIFEST,
                                           _member("passwd", tarfile.SYMTYPE, "/etc/passwd")]),
                         "points outside the bundle"),
    "through-symlink": ("tar.gz", tar_of([MANIFEST, _member("d", tarfile.SYMTYPE, "."),
                                          ("d/escaped.txt", b"x")]),
                        "through a symbolic link"),
    "symlink-chain": ("tar.gz", tar_of([MANIFEST, _member("a", tarfile.DIRTYPE),
                                        _member("a/up", tarfile.SYMTYPE, ".."),
                                        _member("out", tarfile.SYMTYPE, "a/up/..")]),
                      "points outside the bundle"),
    "hard-link": ("tar.gz", tar_of([MANIFEST, _member("h", tarfile.LNKTYPE, "/etc/passwd")]),
                  "is a hard link"),
    "device": ("tar.gz", tar_of([MANIFEST, _member("null", tarfile.CHRTYPE)]),
               "is a device"),
    "fifo": ("tar.gz", tar_of([MANIFEST, _member("pipe", tarfile.FIFOTYPE)]), "is a FIFO"),
    "twice": ("tar.gz", tar_of([MANIFEST, MANIFEST]), "has 'bot.toml' twice"),
    "zip-dot-dot": ("zip", _zip_with("../escaped.txt", b"x"), "unsafe path"),
    "zip-symlink-out": ("zip", _zip_with("link", b"/etc", 0o120777),
                        "points outside the bundle"),
    "zip-bomb": ("zip", _zip_with("zeros.bin", bytes(10 * (CAP_MIB << 20) + 1)),
                 f"unpacks to more than {10 * CAP_MIB} MiB"),
    "not-an-archive": ("tar.gz", b"this is not gzip data at all", "not a readable tar.gz"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archives_are_refused_and_leave_nothing(ladder: HostLadder,
                                                        case: str) -> None:
    fmt, data, error = HOSTILE[case]
    before = ladder.stored()
    with ladder.channel() as channel:
        refused = refusal(lambda: submit(channel, data, "hostile", fmt))
    assert refused.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                              grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert error in (refused.details() or ""), refused.details()
    assert ladder.stored() == before and ladder.leftovers() == []
    out = ladder.folder / "out"
    assert not list(out.rglob("escaped.txt")) and not (out / "uploads" / "escaped.txt").exists()
    assert not Path("/escaped.txt").exists()


def test_kill_9_mid_upload_leaves_nothing_and_a_restart_serves_earlier_uploads(
        tmp_path: Path) -> None:
    first = HostLadder(tmp_path, "[ladder]\nupload_max_mib = 8\n", name="kill-ladder")
    second = None
    release = threading.Event()
    try:
        with first.channel() as channel:
            bundle = tar_gz(python_bot(tmp_path / "bot"))
            kept = submit(channel, bundle, "survivor")
            data = os.urandom(3 << 20)

            def slow() -> Iterator[lp.SubmitBotRequest]:
                messages = parts(data, "survivor", chunk=1 << 20)
                yield next(messages)  # the header
                yield next(messages)  # one chunk of three
                release.wait(120)

            stub = lp.LadderServiceStub(channel)
            call = stub.SubmitBot.future(slow(), metadata=bearer(kept.token), timeout=300)
            first.wait_for(lambda: any((p / "bundle").is_file()
                                       and (p / "bundle").stat().st_size > 0
                                       for p in first.leftovers()), "the upload under way")
            first.stop(signal.SIGKILL)
            release.set()
            assert refusal(call.result).code() in (grpc.StatusCode.UNAVAILABLE,
                                                   grpc.StatusCode.CANCELLED,
                                                   grpc.StatusCode.INTERNAL)
        assert first.leftovers()  # the killed ladder could not clean up ...
        second = HostLadder(tmp_path, name="kill-ladder")
        assert second.leftovers() == []  # ... the next one did, before it listened
        assert second.stored() == {kept.sha256}
        with second.channel() as channel:
            stub = lp.LadderServiceStub(channel)
            state = stub.GetBuildLog(lp.GetBuildLogRequest(name="survivor"),
                                     metadata=bearer(kept.token), timeout=60)
            assert state.build_state == "ready"
            again = submit(channel, bundle, "survivor", metadata=bearer(kept.token))
        assert again.bot.name == "survivor@2" and again.sha256 == kept.sha256
        assert (second.uploads / "sha256" / kept.sha256 / "files" / "random_bot.py").is_file()
    finally:
        release.set()
        end([first, second])


def test_a_submission_without_a_valid_token_is_refused_before_anything_is_read(
        ladder: HostLadder) -> None:
    # The attack: SubmitBot calls that present no valid token and send nothing, held
    # open by the thousand (each one costs the ladder memory while it waits for its
    # header). The token is in the call's metadata: each is refused at once, with
    # nothing of it read.
    silent = threading.Event()

    def nothing() -> Iterator[lp.SubmitBotRequest]:
        silent.wait(120)  # never sends its header while the call lasts
        yield from ()

    with ladder.channel() as channel:
        stub = lp.LadderServiceStub(channel)
        try:
            refused = refusal(lambda: stub.SubmitBot(
                nothing(), metadata=bearer("not-a-token-" + "x" * 24), timeout=60))
        finally:
            silent.set()
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED, refused


def test_one_upload_at_a_time_per_bot(ladder: HostLadder, tmp_path: Path) -> None:
    bundle = tar_gz(python_bot(tmp_path / "bot"))
    release = threading.Event()

    def held() -> Iterator[lp.SubmitBotRequest]:
        messages = parts(bundle, "one-at-a-time", chunk=max(1, len(bundle) // 2))
        yield next(messages)  # the header
        yield next(messages)  # half the bundle
        release.wait(120)
        yield from messages

    with ladder.channel() as channel:
        stub = lp.LadderServiceStub(channel)
        try:
            first = stub.SubmitBot.future(held(), metadata=bearer(OPERATOR_TOKEN),
                                          timeout=300)
            ladder.wait_for(lambda: ladder.leftovers() != [], "the first upload under way")
            second = refusal(lambda: submit(channel, bundle, "one-at-a-time"))
            assert second.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "in progress" in (second.details() or "")
        finally:
            release.set()
        assert first.result().bot.name == "one-at-a-time"
        after = submit(channel, bundle, "one-at-a-time")
    assert after.bot.name == "one-at-a-time@2"
    assert ladder.leftovers() == []


def test_a_bot_token_submitting_version_after_version_is_stopped_at_the_daily_limit(
        ladder: HostLadder, tmp_path: Path) -> None:
    # The attack: a bot's owner submits a different bundle as fast as the ladder takes
    # them, each kept on disk with its files. Past the day's limit every further one is
    # refused before a byte of it is received, and nothing more is kept.
    folder = python_bot(tmp_path / "bot")

    def bundle(n: int) -> bytes:
        (folder / "padding.bin").write_bytes(n.to_bytes(4, "big") + os.urandom(64 << 10))
        return tar_gz(folder)

    with ladder.channel() as channel:
        first = submit(channel, bundle(0), "spammer")  # the operator registers it
        stored_before = len(ladder.stored())
        token, accepted, refused = first.token, 1, None
        for n in range(1, 3 * PER_DAY):
            try:
                answer = submit(channel, bundle(n), "spammer", metadata=bearer(token))
            except grpc.RpcError as e:
                refused = e
                break
            token, accepted = answer.token, accepted + 1
        assert accepted == PER_DAY
        assert refused is not None and refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (f"spammer has {PER_DAY} versions registered in the last 24 hours"
                in (refused.details() or ""))
        assert f"submissions_per_day = {PER_DAY}" in (refused.details() or "")
        assert "the next is accepted from " in (refused.details() or "")
        assert len(ladder.stored()) == stored_before + PER_DAY - 1
        assert ladder.leftovers() == []
        again = refusal(lambda: submit(channel, bundle(99), "spammer", metadata=bearer(token)))
        assert again.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # The operator is never refused for it; the bot's next version plays as before.
        by_operator = submit(channel, bundle(100), "spammer")
    assert by_operator.bot.name == f"spammer@{PER_DAY + 1}"
    assert len(ladder.stored()) == stored_before + PER_DAY


def test_a_submission_that_would_leave_less_free_disk_than_the_reserve_is_refused(
        tmp_path: Path) -> None:
    # A reserve larger than the whole disk: every submission is refused, the operator's
    # too, before anything is received, with the free space in the message.
    reserve_mib = (shutil.disk_usage(tmp_path).total >> 20) + 1
    host = HostLadder(tmp_path, f"[ladder]\nupload_reserve_mib = {reserve_mib}\n",
                      name="full-disk-ladder")
    try:
        data = tar_gz(python_bot(tmp_path / "bot"))
        with host.channel() as channel:
            full = refusal(lambda: submit(channel, data, "no-room"))
            standings = lp.LadderServiceStub(channel).GetStandings(
                lp.GetStandingsRequest(), metadata=bearer(OPERATOR_TOKEN), timeout=60)
        assert full.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "this referee is low on disk: " in (full.details() or "")
        assert f"must leave {reserve_mib:,}.0 MiB for results" in (full.details() or "")
        assert "no-room" not in {s.name for s in standings.standings}
        assert host.stored() == set() and host.leftovers() == []
    finally:
        host.kill()


def test_the_disk_must_hold_the_bundle_what_it_may_unpack_to_and_the_reserve(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = BundleFiles(tmp_path / "uploads", max_bytes=1000, disk_reserve=5000)
    unpacked = files.limits.max_bytes  # 10 times the cap
    free = 300 + unpacked + 5000
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage",
                        lambda path: real(path)._replace(free=free))
    files.receive("tar.gz", 300, "a" * 64).discard()  # exactly enough
    with pytest.raises(UploadLimit, match="low on disk"):
        files.receive("tar.gz", 301, "a" * 64)


def test_a_build_that_would_leave_less_free_disk_than_the_reserve_fails_before_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A build writes up to its output cap (1 GiB) to the disk the results share: it runs
    # only if the disk then still has the reserve, else it fails with the reason and
    # no box is started.
    files = BundleFiles(tmp_path / "uploads", disk_reserve=5000)
    out = BUILD_LIMITS.out_mib << 20
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage",
                        lambda path: real(path)._replace(free=out + 4999))
    boxes: list[object] = []
    monkeypatch.setattr(hosting_build, "run_build",
                        lambda *args, **kwargs: boxes.append(args))
    hosted = Hosted("big@1", "a" * 64, ".", Manifest("native", ("bot",), ("make",)),
                    "building", "")
    state, detail = asyncio.run(hosting_build.build(files, hosted, BuildPolicy()))
    assert (state, boxes) == ("build failed", [])
    assert detail.startswith("this referee was low on disk: "), detail
    assert "must leave 0.0 MiB for results after the most its output may take " \
           "(1,024.0 MiB)" in detail
