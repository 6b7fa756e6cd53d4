"""The one request of the arm64 check: ``POST /api/detect`` with a photo and the table code, as a phone's script would.

Why a separate script (standard library only): it runs inside the arm64 root with the
installed venv's Python, against ``tiplu serve`` started from the systemd unit's command,
so it proves the unit, the environment file's table code and the server answer on arm64.
It waits for the server to listen, sends the photo, and prints the reading as one JSON
line with ``image`` set to the photo's name (the form ``compare.py --served`` reads).

Example::

    python tests/pi/request.py http://127.0.0.1:8765 sample_images/tiplu.jpg --code 123456 > served.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path


def multipart(field: str, photo: Path) -> tuple[bytes, str]:
    """A multipart/form-data body carrying ``photo`` as ``field``; returns (body, content type).

    >>> body, kind = multipart("image", Path(__file__))
    >>> kind.startswith("multipart/form-data; boundary=") and b'name="image"' in body
    True
    """
    boundary = uuid.uuid4().hex
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{photo.name}"\r\n'
            "Content-Type: image/jpeg\r\n\r\n").encode()
    return head + photo.read_bytes() + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def wait_for(base: str, code: str, seconds: float) -> None:
    """Wait until the server answers at all (it loads the models before it listens)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(urllib.request.Request(base + "/join", headers={"X-Table-Code": code}), timeout=10)
            return
        except urllib.error.HTTPError:
            return  # it answered: listening
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the server, e.g. http://127.0.0.1:8765")
    parser.add_argument("photo", type=Path)
    parser.add_argument("--code", required=True, help="the table code (X-Table-Code)")
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for the server to listen")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds to wait for the reading (emulated arm64 reads a photo in minutes)")
    args = parser.parse_args(argv)

    wait_for(args.base, args.code, args.wait)
    body, kind = multipart("image", args.photo)
    request = urllib.request.Request(args.base + "/api/detect", data=body, method="POST",
                                     headers={"Content-Type": kind, "X-Table-Code": args.code})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            reading = json.loads(response.read())
    except urllib.error.HTTPError as error:
        print(f"request: POST /api/detect answered {error.code}: {error.read()[:500]!r}", file=sys.stderr)
        return 1
    reading["image"] = args.photo.name
    print(json.dumps(reading))
    print(f"request: POST /api/detect answered 200 in {time.monotonic() - started:.1f} s, "
          f"{len(reading.get('cards', []))} cards", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
