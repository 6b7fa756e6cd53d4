#!/usr/bin/env bash
# Install tiplu on a Raspberry Pi (Raspberry Pi OS 64-bit, Trixie or Bookworm) and start it at boot.
#
# Why a script: the Pi needs a few things in one order that are easy to get wrong by hand:
# a 64-bit system (PyPI has no 32-bit ARM wheels for onnxruntime or opencv-python), apt's
# camera stack (python3-picamera2), a virtual environment that can see it
# (--system-site-packages), the numpy that apt's compiled camera modules were built for
# (1.x on Bookworm, 2.x on Trixie), a table code that stays the same across restarts, and a
# hardened systemd unit. tests/pi/run runs this very script in emulated arm64 Trixie and
# Bookworm roots (with --no-systemd), and tests/test_install_pi.py runs its checks against
# faked /etc/os-release, dpkg and /proc/meminfo.
#
# Example, as the Pi's usual user (it asks sudo for apt and systemd):
#   git clone --depth 1 <url> ~/tiplu && bash ~/tiplu/scripts/install-pi.sh
#   bash ~/tiplu/scripts/install-pi.sh --update      # later: pull, reinstall, restart
#   journalctl -u tiplu | grep "table code"          # or open /join on the Pi's own screen
set -euo pipefail
# Nothing this script runs writes __pycache__ into the checkout (as root it would be root's).
export PYTHONDONTWRITEBYTECODE=1

# The files the checks read; the tests point them at fakes.
OS_RELEASE="${TIPLU_OS_RELEASE:-/etc/os-release}"
MEMINFO="${TIPLU_MEMINFO:-/proc/meminfo}"
# Under this much memory (MemTotal, kB) a board is a 512 MB one: a Zero 2 W, a Pi 3 A+.
SMALL_BOARD_KB=716800

say() { printf 'install-pi: %s\n' "$*"; }
warn() { printf 'install-pi: warning: %s\n' "$*" >&2; }
die() { printf 'install-pi: error: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<'EOF'
Usage: scripts/install-pi.sh [options]

Installs tiplu from this checkout (or clones it), into a virtual environment that sees
apt's picamera2, and starts it at boot with systemd. Run it again to reinstall; the table
code stays.

  --update          pull the checkout (git pull --ff-only, as its owner), then install
                    again and restart the server
  --repo URL        clone URL with `git clone --depth 1` into --dir instead of using
                    the checkout this script lives in
  --dir DIR         where the code is (default: this checkout, else ~/tiplu)
  --venv DIR        the virtual environment (default ~/tiplu-venv)
  --data DIR        TIPLU_INSTANCE: the ledger, photos and keys (default ~/tiplu-data)
  --user NAME       who runs the server (default: the user calling sudo, else $USER)
  --port N          the port phones open (default 8000)
  --code DIGITS     the table code (default: the one already in the environment file,
                    else 6 random digits); fixed, so it survives restarts
  --profile NAME    TIPLU_PROFILE, the passes the reader makes: full (the model's own)
                    or fast (for a Pi 3 or Zero 2 W; default on a board under 1 GB)
  --env-file PATH   where the code, TIPLU_INSTANCE and TIPLU_PROFILE are kept
                    (default /etc/tiplu/tiplu.env)
  --no-systemd      write the unit file but do not call systemctl (a chroot, a container)
  --no-apt          skip apt (the system packages are already there)
  -h, --help        this text
EOF
}

# The checks. Each prints what it found; a system tiplu cannot run on stops here, before apt.

# The dpkg architecture, not `uname -m`: a 32-bit Raspberry Pi OS on a Pi 4 or 5 runs a
# 64-bit kernel (uname says aarch64) under an armhf userland, where pip finds no wheels.
check_architecture() {
    local arch
    if ! arch="$(dpkg --print-architecture 2>/dev/null)"; then
        say "architecture: no dpkg here (not Raspberry Pi OS or Debian); going on with $(uname -m)"
        return 0
    fi
    case "$arch" in
        arm64) say "architecture: arm64 (64-bit)" ;;
        armhf|armel)
            die "this is a 32-bit system ($arch). PyPI has no 32-bit ARM wheels for onnxruntime and
  opencv-python, so tiplu cannot be installed here. Flash 'Raspberry Pi OS (64-bit)' with
  Raspberry Pi Imager (a Pi 3, 4, 5 or Zero 2 W runs it; the Pi 1, 2 and Zero cannot) and
  run this script again." ;;
        *) say "architecture: $arch, not a Raspberry Pi (arm64); going on" ;;
    esac
}

# The release, from /etc/os-release: which numpy apt's picamera2 was built for. Sets
# RELEASE and CONSTRAINTS (pip constraint lines, one per line).
check_release() {
    [[ -r "$OS_RELEASE" ]] || die "cannot read $OS_RELEASE: which system is this?"
    local codename pretty
    codename="$(sed -n 's/^VERSION_CODENAME=//p' "$OS_RELEASE" | tr -d '"'\''' | tail -n 1)"
    pretty="$(sed -n 's/^PRETTY_NAME=//p' "$OS_RELEASE" | tr -d '"'\''' | tail -n 1)"
    RELEASE="${codename:-unknown}"
    case "$RELEASE" in
        trixie)
            # apt's picamera2 stack (simplejpeg) is built against Debian's numpy 2.2, for Python 3.13.
            CONSTRAINTS="numpy>=2,<3"
            say "release: $pretty: numpy 2, as apt's picamera2 needs" ;;
        bookworm)
            # Built against Debian's numpy 1.24: numpy 2 makes it fail ("compiled using NumPy
            # 1.x cannot be run in NumPy 2.x"); opencv-python 4.12 and later require numpy 2.
            CONSTRAINTS=$'numpy<2\nopencv-python<4.12'
            say "release: $pretty: numpy below 2, as apt's picamera2 needs" ;;
        bullseye|buster|stretch|jessie)
            die "$pretty is too old: tiplu needs Python 3.11 or later. Flash Raspberry Pi OS (64-bit),
  Trixie, with Raspberry Pi Imager and run this script again." ;;
        *)
            CONSTRAINTS="numpy>=2"
            warn "release: ${pretty:-unknown} is not one this script was checked on (Trixie, Bookworm);
  going on as for Trixie (numpy 2). If the Table camera fails to import picamera2, say so in an issue." ;;
    esac
}

# The memory, from /proc/meminfo: a board under 1 GB reads a photo, but only just. Sets
# MEMORY_KB and SUGGESTED_PROFILE (fast on such a board, else empty).
check_memory() {
    MEMORY_KB="$(awk '/^MemTotal:/ {print $2}' "$MEMINFO" 2>/dev/null || true)"
    SUGGESTED_PROFILE=""
    if [[ ! "$MEMORY_KB" =~ ^[0-9]+$ ]]; then
        say "memory: cannot read MemTotal from $MEMINFO; going on"
        MEMORY_KB=""
        return 0
    fi
    local mb=$((MEMORY_KB / 1024))
    if ((MEMORY_KB < SMALL_BOARD_KB)); then
        SUGGESTED_PROFILE=fast
        warn "this board has ${mb} MB of memory, under 1 GB (a Zero 2 W or a Pi 3 A+). Reading a
  photo takes about 274 MB at its peak for 1280x960 and 348 MB for 16 megapixels, so tiplu
  reads with --profile fast here, and may still run out of memory with a browser or
  desktop open: use Raspberry Pi OS Lite, take photos of 1280x960 or smaller, and prefer a
  board with 1 GB or more (Pi 3 B/B+, Pi 4, Pi 5)."
    else
        say "memory: ${mb} MB"
    fi
}

# Run a command as RUN_USER, in RUN_USER's home (git and pip read their settings there; under
# sudo HOME is root's), so the venv, the data and the checkout stay the user's.
as_user() {
    if [[ "$(id -un)" == "$RUN_USER" ]]; then "$@"
    elif ((EUID == 0)); then runuser -u "$RUN_USER" -- env HOME="$HOME_DIR" "$@"
    else sudo -u "$RUN_USER" -- env HOME="$HOME_DIR" "$@"
    fi
}

# The systemd unit, hardened: the server writes only its data folder (ProtectSystem=strict,
# with TIPLU_INSTANCE in ReadWritePaths) and its private /tmp. Home folders are read-only
# to it (ProtectHome=read-only, not "yes": the checkout, the venv and the data folder live
# in the user's home, and ReadWritePaths opens a folder under a read-only /home, not under
# a hidden one). The camera: the video group, with /dev left as it is.
unit_text() {
    cat <<EOF
[Unit]
Description=tiplu table assistant
After=network-online.target
Wants=network-online.target

[Service]
User=$RUN_USER
SupplementaryGroups=video
EnvironmentFile=$ENV_FILE
ExecStart=$VENV/bin/tiplu serve --host 0.0.0.0 --port $PORT --no-qr
Restart=on-failure
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=read-only
ReadWritePaths=$DATA
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes

[Install]
WantedBy=multi-user.target
EOF
}

main() {
    local REPO="" UPDATE=0 SYSTEMD=1 APT=1 PROFILE="" args=("$@")
    DIR="" VENV="" DATA="" RUN_USER="" PORT=8000 CODE="" ENV_FILE=/etc/tiplu/tiplu.env
    while (($#)); do
        case "$1" in
            --update) UPDATE=1; shift ;;
            --repo) REPO="${2:?--repo needs a URL}"; shift 2 ;;
            --dir) DIR="${2:?--dir needs a folder}"; shift 2 ;;
            --venv) VENV="${2:?--venv needs a folder}"; shift 2 ;;
            --data) DATA="${2:?--data needs a folder}"; shift 2 ;;
            --user) RUN_USER="${2:?--user needs a name}"; shift 2 ;;
            --port) PORT="${2:?--port needs a number}"; shift 2 ;;
            --code) CODE="${2:?--code needs digits}"; shift 2 ;;
            --profile) PROFILE="${2:?--profile needs full or fast}"; shift 2 ;;
            --env-file) ENV_FILE="${2:?--env-file needs a path}"; shift 2 ;;
            --no-systemd) SYSTEMD=0; shift ;;
            --no-apt) APT=0; shift ;;
            -h|--help) usage; exit 0 ;;
            *) usage >&2; die "unknown option: $1" ;;
        esac
    done

    [[ "$PORT" =~ ^[0-9]+$ ]] || die "--port must be a number, not '$PORT'"
    [[ -z "$CODE" || "$CODE" =~ ^[0-9]{4,32}$ ]] || die "--code must be 4 to 32 digits, not '$CODE'"
    [[ -z "$PROFILE" || "$PROFILE" == full || "$PROFILE" == fast ]] || die "--profile must be full or fast, not '$PROFILE'"

    # Root runs apt and writes /etc; everyone else goes through sudo (Raspberry Pi OS's default user has it).
    if ((EUID == 0)); then SUDO=(); else SUDO=(sudo); fi
    RUN_USER="${RUN_USER:-${SUDO_USER:-$(id -un)}}"
    id "$RUN_USER" >/dev/null 2>&1 || die "no user '$RUN_USER' (give --user)"
    local here
    HOME_DIR="$(getent passwd "$RUN_USER" | cut -d: -f6)"
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    if [[ -z "$DIR" ]]; then
        if [[ -z "$REPO" && -f "$here/pyproject.toml" ]] && grep -q '^name = "tiplu"' "$here/pyproject.toml"; then
            DIR="$here"
        else
            DIR="$HOME_DIR/tiplu"
        fi
    fi
    VENV="${VENV:-$HOME_DIR/tiplu-venv}"
    DATA="${DATA:-$HOME_DIR/tiplu-data}"

    # --update: pull as the checkout's owner, then run the pulled script (it may have changed)
    # without --update. Everything is in functions, so bash has read this file whole.
    if ((UPDATE)); then
        [[ -d "$DIR/.git" ]] || die "$DIR is not a git checkout, so --update cannot pull it (clone it with git, or give --dir)"
        say "updating $DIR (git pull --ff-only)"
        as_user git -C "$DIR" pull --ff-only || die "git pull failed in $DIR: local changes? ('git -C $DIR status')"
        local rest=() arg
        for arg in "${args[@]}"; do [[ "$arg" == --update ]] || rest+=("$arg"); done
        exec bash "$DIR/scripts/install-pi.sh" --dir "$DIR" "${rest[@]}"
    fi

    check_architecture
    check_release
    check_memory

    # 1. System packages. python3-picamera2 comes from Raspberry Pi's apt archive, not from
    #    pip; libgl1 and GLib are what opencv-python's wheel loads (GLib is libglib2.0-0t64
    #    since Trixie).
    if ((APT)); then
        "${SUDO[@]}" apt-get update -q
        local packages=(python3 python3-venv python3-pip python3-numpy git ca-certificates libgl1)
        if apt-cache show libglib2.0-0t64 >/dev/null 2>&1; then packages+=(libglib2.0-0t64); else packages+=(libglib2.0-0); fi
        if apt-cache show python3-picamera2 >/dev/null 2>&1; then
            packages+=(python3-picamera2)
        else
            say "apt has no python3-picamera2 here (not Raspberry Pi OS): the Table camera will use OpenCV (a USB webcam)"
        fi
        say "apt: ${packages[*]}"
        "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${packages[@]}"
    fi

    # 2. The code: this checkout, or a shallow clone (the full history holds old training files).
    if [[ -n "$REPO" ]]; then
        if [[ -d "$DIR/.git" ]]; then
            say "updating $DIR"
            as_user git -C "$DIR" pull --ff-only
        else
            say "cloning $REPO into $DIR"
            as_user git clone --depth 1 "$REPO" "$DIR"
        fi
    fi
    [[ -f "$DIR/pyproject.toml" ]] || die "$DIR has no pyproject.toml: give --repo URL or --dir"

    # 3. The virtual environment, with apt's packages visible (picamera2 and libcamera live
    #    there), and the release's numpy (check_release). pip runs as the user: the build of
    #    the editable install writes into the checkout.
    say "virtual environment $VENV (with the system site packages)"
    as_user python3 -m venv --system-site-packages "$VENV"
    local constraints="$VENV/tiplu-pi-constraints.txt"
    printf '# Kept by scripts/install-pi.sh for %s: the numpy apt'\''s picamera2 stack was built for.\n%s\n' \
        "$RELEASE" "$CONSTRAINTS" | as_user tee "$constraints" >/dev/null
    as_user "$VENV/bin/pip" install --upgrade --quiet --constraint "$constraints" --editable "$DIR"
    as_user "$VENV/bin/python" - <<'EOF' || die "the installed packages do not import (see above)"
import importlib.util

import cv2
import numpy
import onnxruntime

camera = "picamera2" if importlib.util.find_spec("picamera2") else "OpenCV (no picamera2)"
print(f"install-pi: numpy {numpy.__version__}, opencv {cv2.__version__}, onnxruntime {onnxruntime.__version__}; "
      f"Table camera: {camera}")
if camera == "picamera2":
    import picamera2  # noqa: F401  (fails here, not at the table, when numpy is wrong)
EOF

    # 4. A fixed table code, TIPLU_INSTANCE and TIPLU_PROFILE in an environment file only root
    #    and the user read. What is already there stays unless an option says otherwise.
    local kept_profile=""
    if "${SUDO[@]}" test -f "$ENV_FILE"; then
        [[ -n "$CODE" ]] || CODE="$("${SUDO[@]}" sed -n 's/^TIPLU_TABLE_CODE=//p' "$ENV_FILE" | tail -n 1)"
        kept_profile="$("${SUDO[@]}" sed -n 's/^TIPLU_PROFILE=//p' "$ENV_FILE" | tail -n 1)"
    fi
    if [[ -z "$CODE" ]]; then
        CODE="$(as_user "$VENV/bin/python" -c 'from web.security import new_table_code; print(new_table_code())')"
    fi
    # The profile: --profile, else the one already chosen, else fast on a board under 1 GB.
    PROFILE="${PROFILE:-${kept_profile:-$SUGGESTED_PROFILE}}"
    as_user mkdir -p "$DATA"
    local group
    group="$(id -gn "$RUN_USER")"
    "${SUDO[@]}" install -d -m 0755 "$(dirname "$ENV_FILE")"
    {
        printf 'TIPLU_INSTANCE=%s\nTIPLU_TABLE_CODE=%s\n' "$DATA" "$CODE"
        [[ -z "$PROFILE" ]] || printf 'TIPLU_PROFILE=%s\n' "$PROFILE"
    } | "${SUDO[@]}" install -m 0640 -o root -g "$group" /dev/stdin "$ENV_FILE"
    say "table code, TIPLU_INSTANCE${PROFILE:+ and TIPLU_PROFILE=$PROFILE} in $ENV_FILE"

    # 5. The systemd unit.
    local unit=/etc/systemd/system/tiplu.service
    unit_text | "${SUDO[@]}" install -m 0644 /dev/stdin "$unit"
    say "wrote $unit"
    if ((SYSTEMD)); then
        "${SUDO[@]}" systemctl daemon-reload
        "${SUDO[@]}" systemctl enable --now tiplu
        "${SUDO[@]}" systemctl restart tiplu
        say "tiplu runs now and at every boot: phones on this Wi-Fi open http://$(hostname).local:$PORT/"
    else
        say "--no-systemd: start it with: sudo systemctl enable --now tiplu"
    fi
    say "the table code is $CODE: it stays in $ENV_FILE; read it again with 'journalctl -u tiplu | grep \"table code\"', or on the /join page of any phone already in"
}

# Sourced (the tests), it only defines the functions; run, it installs.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    main "$@"
fi
