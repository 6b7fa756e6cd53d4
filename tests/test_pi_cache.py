"""tests/pi/run's base root cache: built as a tar, and a broken or half-built cache built again.

The arm64 check keeps each release's base root (a tar made by mmdebstrap) and reuses it.
Its first version let mmdebstrap pick the format from the name "*.tar.part", got a
directory, moved it to the tar's name and could never recover. Here the real script runs
``--base-only`` (up to the base root, nothing installed) with a stand-in ``mmdebstrap``
that behaves as the real one does: a tar only when ``--format=tar`` is given, else a
directory; it counts its builds. The real mmdebstrap is run by ``tests/pi/run`` itself.

Needs root and qemu-aarch64 already registered with binfmt_misc (the script checks both).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent / "pi" / "run"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/proc/sys/fs/binfmt_misc/qemu-aarch64").exists()
    or shutil.which("qemu-aarch64-static") is None,
    reason="needs root and qemu-aarch64 registered with binfmt_misc (apt install qemu-user-static)")

FAKE_MMDEBSTRAP = r'''#!/usr/bin/env python3
"""Like mmdebstrap: the output's format from --format, else from its name (a "*.part" is a directory)."""
import io, os, sys, tarfile
args = sys.argv[1:]
if os.environ.get("FAKE_MMDEBSTRAP_FAIL"):
    sys.exit("E: setup failed")
positional = [a for a in args if not a.startswith("--")]
output = positional[1]
log = os.environ["FAKE_MMDEBSTRAP_LOG"]
builds = sum(1 for _ in open(log)) + 1 if os.path.exists(log) else 1
with open(log, "a") as out:
    out.write(" ".join(args) + "\n")
if "--format=tar" not in args and not output.endswith(".tar"):
    os.makedirs(os.path.join(output, "etc"))
    open(os.path.join(output, "etc", "os-release"), "w").write("VERSION_CODENAME=trixie\n")
    sys.exit(0)
with tarfile.open(output, "w") as tar:
    data = f"VERSION_CODENAME=trixie\nBUILD={builds}\n".encode()
    info = tarfile.TarInfo("./etc/os-release")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
'''


def build(cache: Path, tmp_path: Path, *options: str, fail: bool = False) -> subprocess.CompletedProcess[str]:
    """``tests/pi/run --release trixie --base-only`` with the stand-in mmdebstrap first on PATH."""
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    fake = tools / "mmdebstrap"
    fake.write_text(FAKE_MMDEBSTRAP)
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "TIPLU_PI_ROOT": str(cache),
           "TIPLU_X86_PYTHON": sys.executable, "FAKE_MMDEBSTRAP_LOG": str(tmp_path / "builds.log")}
    if fail:
        env["FAKE_MMDEBSTRAP_FAIL"] = "1"
    return subprocess.run(["bash", str(RUN), "--release", "trixie", "--base-only", *options],
                          capture_output=True, text=True, timeout=120, env=env)


def builds(tmp_path: Path) -> list[str]:
    log = tmp_path / "builds.log"
    return log.read_text().splitlines() if log.exists() else []


def build_number(base: Path) -> str:
    """Which build of the stand-in wrote the cached tar (its os-release's BUILD line)."""
    with tarfile.open(base) as tar:
        member = tar.extractfile("./etc/os-release")
        assert member is not None
        return member.read().decode().split("BUILD=")[1].strip()


def break_nothing(cache: Path) -> None:
    """An empty cache."""


def leave_a_directory(cache: Path) -> None:
    """What the first version left: mmdebstrap's directory under the tar's name."""
    (cache / "trixie-arm64.tar" / "etc").mkdir(parents=True)


def leave_a_part(cache: Path) -> None:
    """A build cut short: a half-written ``.part``, no tar."""
    (cache / "trixie-arm64.tar.part").write_bytes(b"\0" * 512)


def leave_a_truncated_tar(cache: Path) -> None:
    """A tar cut short (a disk that filled up)."""
    (cache / "trixie-arm64.tar").write_bytes(b"./etc/os-release\0 truncated")


@pytest.mark.parametrize("broken", [break_nothing, leave_a_directory, leave_a_part, leave_a_truncated_tar])
def test_a_missing_or_broken_base_root_is_built_as_a_tar(tmp_path: Path, broken: Callable[[Path], None]) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    broken(cache)
    done = build(cache, tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(builds(tmp_path)) == 1 and "--format=tar" in builds(tmp_path)[0]
    base = cache / "trixie-arm64.tar"
    assert base.is_file() and build_number(base) == "1"
    assert not (cache / "trixie-arm64.tar.part").exists()


def test_a_whole_base_root_is_reused_and_rebuild_replaces_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert build(cache, tmp_path).returncode == 0
    again = build(cache, tmp_path)
    assert again.returncode == 0 and "base root ready" in again.stdout and "(cached)" in again.stdout
    assert len(builds(tmp_path)) == 1, "the cached tar is reused"
    rebuilt = build(cache, tmp_path, "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert len(builds(tmp_path)) == 2 and build_number(cache / "trixie-arm64.tar") == "2"


def test_a_failed_rebuild_keeps_the_base_root_it_had(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert build(cache, tmp_path).returncode == 0
    failed = build(cache, tmp_path, "--rebuild", fail=True)
    assert failed.returncode != 0 and "setup failed" in failed.stderr
    assert build_number(cache / "trixie-arm64.tar") == "1"
