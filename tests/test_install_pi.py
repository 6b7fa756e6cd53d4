"""scripts/install-pi.sh's checks and unit, run in a real bash against faked system files.

The script reads ``$TIPLU_OS_RELEASE`` and ``$TIPLU_MEMINFO`` instead of ``/etc/os-release``
and ``/proc/meminfo`` when they are set, and ``dpkg`` from ``PATH``; sourced, it only
defines its functions. So each test sources it in a subprocess bash with fake files and a
fake ``dpkg`` and calls one check: what a Pi owner on that system would see, with no apt,
pip or systemd touched. The whole install runs in ``tests/pi/run`` (emulated arm64).
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "install-pi.sh"

TRIXIE = 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nNAME="Debian GNU/Linux"\nVERSION_ID="13"\nVERSION_CODENAME=trixie\nID=debian\n'
BOOKWORM = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nID=debian\n'
BULLSEYE = 'PRETTY_NAME="Raspbian GNU/Linux 11 (bullseye)"\nVERSION_ID="11"\nVERSION_CODENAME=bullseye\nID=raspbian\n'
UBUNTU = 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nVERSION_CODENAME=noble\nID=ubuntu\n'


@dataclass(frozen=True)
class Outcome:
    """What one check did: its exit status, what it printed, and the variables it set."""

    status: int
    out: str
    err: str
    variables: dict[str, str]


def run_check(tmp_path: Path, call: str, *, os_release: str = TRIXIE, memory_kb: int | None = 3_884_000,
              dpkg_arch: str | None = "arm64", export: tuple[str, ...] = ()) -> Outcome:
    """Source the script in bash with fake files, run ``call``, and print the ``export`` variables after it.

    ``dpkg_arch=None`` leaves ``dpkg`` out of ``PATH`` altogether (a system without it).
    """
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir(exist_ok=True)
    for tool in ("bash", "sed", "awk", "tr", "tail", "uname", "cat"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed on this machine"
        (fake_bin / tool).unlink(missing_ok=True)
        (fake_bin / tool).symlink_to(found)
    dpkg = fake_bin / "dpkg"
    dpkg.unlink(missing_ok=True)
    if dpkg_arch is not None:
        dpkg.write_text(f'#!/bin/sh\n[ "$1" = --print-architecture ] && echo {dpkg_arch}\n')
        dpkg.chmod(0o755)
    release_file = tmp_path / "os-release"
    release_file.write_text(os_release)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("" if memory_kb is None else
                       f"MemTotal:       {memory_kb} kB\nMemFree:         120000 kB\n")
    shown = tmp_path / "variables"
    shown.unlink(missing_ok=True)
    show = "".join(f'printf "%s=%s\\0" {name} "${name}" >> "$2"; ' for name in export)
    env = {"PATH": str(fake_bin), "TIPLU_OS_RELEASE": str(release_file), "TIPLU_MEMINFO": str(meminfo),
           "LANG": "C.UTF-8"}
    done = subprocess.run([str(fake_bin / "bash"), "-c", f'source "$1"; {call}; {show}', "check", str(SCRIPT), str(shown)],
                          capture_output=True, text=True, timeout=30, env=env)
    fields = shown.read_text().split("\0") if shown.exists() else []
    variables = dict(field.split("=", 1) for field in fields if field)
    return Outcome(done.returncode, done.stdout, done.stderr, variables)


@pytest.mark.parametrize(("os_release", "status", "constraints", "said"), [
    (TRIXIE, 0, "numpy>=2,<3", "Debian GNU/Linux 13 (trixie): numpy 2,"),
    (BOOKWORM, 0, "numpy<2\nopencv-python<4.12", "Debian GNU/Linux 12 (bookworm): numpy below 2"),
    (UBUNTU, 0, "numpy>=2", "Ubuntu 24.04.1 LTS is not one this script was checked on"),
    (BULLSEYE, 1, None, "Raspbian GNU/Linux 11 (bullseye) is too old: tiplu needs Python 3.11"),
    ("NAME=something\n", 0, "numpy>=2", "unknown is not one this script was checked on"),
])
def test_the_release_decides_the_numpy_that_apts_picamera2_needs(
        tmp_path: Path, os_release: str, status: int, constraints: str | None, said: str) -> None:
    outcome = run_check(tmp_path, "check_release", os_release=os_release, export=("CONSTRAINTS", "RELEASE"))
    assert outcome.status == status, outcome.err
    assert said in outcome.out + outcome.err
    if constraints is not None:
        assert outcome.variables["CONSTRAINTS"] == constraints


def test_an_unreadable_os_release_stops_with_what_was_looked_for(tmp_path: Path) -> None:
    outcome = run_check(tmp_path, 'TIPLU_OS_RELEASE=/nonexistent OS_RELEASE=/nonexistent; check_release')
    assert outcome.status == 1
    assert "cannot read /nonexistent" in outcome.err


@pytest.mark.parametrize(("dpkg_arch", "status", "said"), [
    ("arm64", 0, "architecture: arm64 (64-bit)"),
    ("armhf", 1, "this is a 32-bit system (armhf)"),
    ("armel", 1, "this is a 32-bit system (armel)"),
    ("amd64", 0, "architecture: amd64, not a Raspberry Pi (arm64); going on"),
    (None, 0, "architecture: no dpkg here"),
])
def test_the_architecture_comes_from_dpkg_and_32_bit_stops_at_once(
        tmp_path: Path, dpkg_arch: str | None, status: int, said: str) -> None:
    outcome = run_check(tmp_path, "check_architecture", dpkg_arch=dpkg_arch)
    assert outcome.status == status
    assert said in outcome.out + outcome.err
    if status:
        assert "Flash 'Raspberry Pi OS (64-bit)'" in outcome.err, "it says what to install instead"


def test_a_32_bit_userland_stops_even_when_the_kernel_says_aarch64(tmp_path: Path) -> None:
    outcome = run_check(tmp_path, 'uname() { echo aarch64; }; check_architecture; echo "went on"', dpkg_arch="armhf")
    assert outcome.status == 1 and "went on" not in outcome.out


@pytest.mark.parametrize(("memory_kb", "profile", "warned"), [
    (427_000, "fast", True),      # Zero 2 W: 512 MB, less the GPU's share
    (700_000, "fast", True),
    (716_800, "", False),        # the line: 700 MB
    (948_000, "", False),        # Pi 3 B+: 1 GB
    (3_884_000, "", False),      # Pi 4: 4 GB
    (8_245_000, "", False),      # Pi 5: 8 GB
    (None, "", False),           # no MemTotal line
])
def test_a_board_under_1_gb_is_warned_and_reads_with_the_fast_profile(
        tmp_path: Path, memory_kb: int | None, profile: str, warned: bool) -> None:
    outcome = run_check(tmp_path, "check_memory", memory_kb=memory_kb, export=("SUGGESTED_PROFILE", "MEMORY_KB"))
    assert outcome.status == 0, outcome.err
    assert outcome.variables["SUGGESTED_PROFILE"] == profile
    assert ("under 1 GB" in outcome.err) is warned
    if warned:
        assert memory_kb is not None and f"{memory_kb // 1024} MB of memory" in outcome.err and "--profile fast" in outcome.err


class CaseSensitiveParser(configparser.ConfigParser):
    """An INI reader that keeps the keys' case, as systemd does."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def write_unit(tmp_path: Path) -> tuple[str, Path]:
    """The unit text the script writes, for a user with the venv and data under ``tmp_path``."""
    venv, data = tmp_path / "venv", tmp_path / "data"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "tiplu").write_text("#!/bin/sh\n")
    (venv / "bin" / "tiplu").chmod(0o755)
    data.mkdir()
    env_file = tmp_path / "tiplu.env"
    env_file.write_text("TIPLU_INSTANCE=x\n")
    outcome = run_check(tmp_path, f'RUN_USER=pi ENV_FILE="{env_file}" VENV="{venv}" DATA="{data}" PORT=8000; unit_text')
    assert outcome.status == 0, outcome.err
    return outcome.out, data


def test_the_unit_is_hardened_and_keeps_the_camera_and_the_data_folder(tmp_path: Path) -> None:
    text, data = write_unit(tmp_path)
    unit = CaseSensitiveParser(interpolation=None, strict=True)
    unit.read_string(text)
    service = unit["Service"]
    assert service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict"
    assert service["ReadWritePaths"] == str(data), "the ledger, photos and keys stay writable"
    assert service["ProtectHome"] == "read-only", "the checkout and venv in the home folder stay readable"
    assert service["PrivateTmp"] == "yes"
    assert service["SupplementaryGroups"] == "video", "the Pi camera and /dev/video*"
    assert "PrivateDevices" not in service, "a private /dev would hide the camera"
    assert service["ExecStart"].endswith("bin/tiplu serve --host 0.0.0.0 --port 8000 --no-qr")
    assert unit["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    text, _data = write_unit(tmp_path)
    unit = tmp_path / "tiplu.service"
    unit.write_text(text)
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SYSTEMD_LOG_LEVEL": "warning"})
    # Warnings about this machine's own units are not the unit's; only lines naming it count.
    ours = [line for line in (done.stdout + done.stderr).splitlines() if "tiplu.service" in line]
    assert done.returncode == 0 and not ours, done.stdout + done.stderr


@pytest.mark.parametrize(("arguments", "said"), [
    (["--profile", "quick"], "--profile must be full or fast, not 'quick'"),
    (["--port", "eighty"], "--port must be a number, not 'eighty'"),
    (["--code", "12"], "--code must be 4 to 32 digits, not '12'"),
    (["--frobnicate"], "unknown option: --frobnicate"),
])
def test_a_wrong_option_stops_before_anything_is_installed(tmp_path: Path, arguments: list[str], said: str) -> None:
    outcome = run_check(tmp_path, "main " + " ".join(arguments))
    assert outcome.status == 1
    assert said in outcome.err
