#!/usr/bin/env bash
# Install tiplu on a Raspberry Pi (Raspberry Pi OS Bookworm 64-bit) and start it at boot.
#
# Why a script: the Pi needs a few things in one order that are easy to get wrong by hand:
# apt's camera stack (python3-picamera2), a virtual environment that can see it
# (--system-site-packages), a numpy that apt's compiled camera modules accept (below 2),
# a table code that stays the same across restarts, and a systemd unit. tests/pi/run runs
# this very script in an emulated arm64 Bookworm root (with --no-systemd), so what it does
# is checked before a change to vision/ or the dependencies is merged.
#
# Example, as the Pi's usual user (it asks sudo for apt and systemd):
#   git clone --depth 1 <url> ~/tiplu && bash ~/tiplu/scripts/install-pi.sh
#   journalctl -u tiplu | grep "table code"      # or open /join on the Pi's own screen
set -euo pipefail

say() { printf 'install-pi: %s\n' "$*"; }
die() { printf 'install-pi: error: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<'EOF'
Usage: scripts/install-pi.sh [options]

Installs tiplu from this checkout (or clones it), into a virtual environment that sees
apt's picamera2, and starts it at boot with systemd.

  --repo URL        clone URL with `git clone --depth 1` into --dir instead of using
                    the checkout this script lives in
  --dir DIR         where the code is (default: this checkout, else ~/tiplu)
  --venv DIR        the virtual environment (default ~/tiplu-venv)
  --data DIR        TIPLU_INSTANCE: the ledger, photos and keys (default ~/tiplu-data)
  --user NAME       who runs the server (default: the user calling sudo, else $USER)
  --port N          the port phones open (default 8000)
  --code DIGITS     the table code (default: the one already in the environment file,
                    else 6 random digits); fixed, so it survives restarts
  --env-file PATH   where the code and TIPLU_INSTANCE are kept (default /etc/tiplu/tiplu.env)
  --no-systemd      write the unit file but do not call systemctl (a chroot, a container)
  --no-apt          skip apt (the system packages are already there)
  -h, --help        this text
EOF
}

REPO="" DIR="" VENV="" DATA="" RUN_USER="" PORT=8000 CODE="" ENV_FILE=/etc/tiplu/tiplu.env
SYSTEMD=1 APT=1
while (($#)); do
    case "$1" in
        --repo) REPO="${2:?--repo needs a URL}"; shift 2 ;;
        --dir) DIR="${2:?--dir needs a folder}"; shift 2 ;;
        --venv) VENV="${2:?--venv needs a folder}"; shift 2 ;;
        --data) DATA="${2:?--data needs a folder}"; shift 2 ;;
        --user) RUN_USER="${2:?--user needs a name}"; shift 2 ;;
        --port) PORT="${2:?--port needs a number}"; shift 2 ;;
        --code) CODE="${2:?--code needs digits}"; shift 2 ;;
        --env-file) ENV_FILE="${2:?--env-file needs a path}"; shift 2 ;;
        --no-systemd) SYSTEMD=0; shift ;;
        --no-apt) APT=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $1" ;;
    esac
done

[[ "$PORT" =~ ^[0-9]+$ ]] || die "--port must be a number, not '$PORT'"
[[ -z "$CODE" || "$CODE" =~ ^[0-9]{4,32}$ ]] || die "--code must be 4 to 32 digits, not '$CODE'"

# Root runs apt and writes /etc; everyone else goes through sudo (Raspberry Pi OS's default user has it).
if ((EUID == 0)); then SUDO=(); else SUDO=(sudo); fi
RUN_USER="${RUN_USER:-${SUDO_USER:-$(id -un)}}"
id "$RUN_USER" >/dev/null 2>&1 || die "no user '$RUN_USER' (give --user)"
HOME_DIR="$(getent passwd "$RUN_USER" | cut -d: -f6)"
# Run a command as RUN_USER, so the venv and the data belong to the user the server runs as.
as_user() {
    if [[ "$(id -un)" == "$RUN_USER" ]]; then "$@"
    elif ((EUID == 0)); then runuser -u "$RUN_USER" -- "$@"
    else sudo -u "$RUN_USER" -- "$@"
    fi
}

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "$DIR" ]]; then
    if [[ -z "$REPO" && -f "$HERE/pyproject.toml" ]] && grep -q '^name = "tiplu"' "$HERE/pyproject.toml"; then
        DIR="$HERE"
    else
        DIR="$HOME_DIR/tiplu"
    fi
fi
VENV="${VENV:-$HOME_DIR/tiplu-venv}"
DATA="${DATA:-$HOME_DIR/tiplu-data}"

arch="$(uname -m)"
[[ "$arch" == aarch64 ]] || say "note: this machine is $arch, not aarch64 (a 64-bit Pi); going on"

# 1. System packages. python3-picamera2 comes from Raspberry Pi's apt archive, not from
#    pip; libgl1 and libglib2.0-0 are what opencv-python's wheel loads.
if ((APT)); then
    packages=(python3 python3-venv python3-pip python3-numpy git ca-certificates libgl1 libglib2.0-0)
    if apt-cache show python3-picamera2 >/dev/null 2>&1; then
        packages+=(python3-picamera2)
    else
        say "apt has no python3-picamera2 here (not Raspberry Pi OS): the Table camera will use OpenCV (a USB webcam)"
    fi
    say "apt: ${packages[*]}"
    "${SUDO[@]}" apt-get update -q
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

# 3. The virtual environment, with apt's packages visible (picamera2 and libcamera live there).
#    numpy stays below 2: apt's compiled camera modules (simplejpeg, under picamera2) were
#    built against Debian's numpy 1.24 and refuse numpy 2 ("compiled using NumPy 1.x cannot
#    be run in NumPy 2.x"); opencv-python 4.12 and later require numpy 2, hence its cap.
say "virtual environment $VENV (with the system site packages)"
as_user python3 -m venv --system-site-packages "$VENV"
constraints="$VENV/tiplu-pi-constraints.txt"
as_user tee "$constraints" >/dev/null <<'EOF'
# Kept by scripts/install-pi.sh: apt's picamera2 stack needs numpy 1.x (see the script).
numpy<2
opencv-python<4.12
EOF
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

# 4. A fixed table code and TIPLU_INSTANCE in an environment file only root and the user read.
if [[ -z "$CODE" ]] && "${SUDO[@]}" test -f "$ENV_FILE"; then
    CODE="$("${SUDO[@]}" sed -n 's/^TIPLU_TABLE_CODE=//p' "$ENV_FILE" | tail -n 1)"
fi
if [[ -z "$CODE" ]]; then
    CODE="$("$VENV/bin/python" -c 'from web.security import new_table_code; print(new_table_code())')"
fi
as_user mkdir -p "$DATA"
group="$(id -gn "$RUN_USER")"
"${SUDO[@]}" install -d -m 0755 "$(dirname "$ENV_FILE")"
printf 'TIPLU_INSTANCE=%s\nTIPLU_TABLE_CODE=%s\n' "$DATA" "$CODE" \
    | "${SUDO[@]}" install -m 0640 -o root -g "$group" /dev/stdin "$ENV_FILE"
say "table code and TIPLU_INSTANCE in $ENV_FILE"

# 5. The systemd unit (the video group opens /dev/video* and the Pi camera).
unit=/etc/systemd/system/tiplu.service
"${SUDO[@]}" install -m 0644 /dev/stdin "$unit" <<EOF
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

[Install]
WantedBy=multi-user.target
EOF
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
