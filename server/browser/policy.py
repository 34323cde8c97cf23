"""Where the browser may go, and the shapes of the tool's coordinates and sizes.

Loopback is always allowed: 127.0.0.1, ::1, `localhost` and names under `.localhost` (which
Chromium answers with loopback itself). Any other host (127.0.0.2 too) needs a glob of
`browser.allowedHosts` matching its name (`*.example.com`, `docs.python.org`; `*` and `?` only,
case-insensitive): the same names Chromium's host resolver is told to let through (driver.py), so
what is allowed here and what the browser reaches are one list. Only http and https are
followed: `file:` and the rest are refused.

The same check runs on `launch` (a clear refusal before anything starts) and on every request
the page makes (driver.py intercepts them), so a link, a script or a redirect cannot take the
browser to a host the user did not allow.
"""

from __future__ import annotations

import re
from typing import Literal, Sequence
from urllib.parse import urlsplit

#: The schemes a page may load.
SCHEMES = ("http", "https")

#: The loopback hosts, as Chromium's host resolver rules name them.
LOOPBACK_NAMES = ("localhost", "*.localhost", "127.0.0.1", "::1")

#: What a glob of browser.allowedHosts may hold: a host name or an IP, `*` and `?`; nothing that
#: would mean more in Chromium's host resolver rules (a comma, a space).
GLOB = re.compile(r"[A-Za-z0-9*?._:-]{1,253}")

#: The smallest and largest viewport side, in CSS pixels.
MIN_SIDE, MAX_SIDE = 200, 4096

_SIZE = re.compile(r"^\s*(\d{1,5})\s*[xX×]\s*(\d{1,5})\s*$")
_COORDINATE = re.compile(r"^\s*(-?\d{1,6})\s*,\s*(-?\d{1,6})\s*$")


def is_loopback(host: str) -> bool:
    host = host.lower().rstrip(".").strip("[]")
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")


def refusal(url: str, allowed_hosts: Sequence[str]) -> str | None:
    """Why the browser may not load `url` (None: it may)."""
    found = check(url, allowed_hosts)
    return found[1] if found else None


def check(url: str, allowed_hosts: Sequence[str]) -> tuple[Literal["url", "host"], str] | None:
    """None when the browser may load `url`; else what is wrong (the URL itself: not a valid
    http(s) URL; or its host: not allowed) and why, in words for the model and the user."""
    try:  # read as Chromium reads it (WHATWG): tabs and newlines dropped, `\` a `/` in http(s)
        parts = urlsplit(re.sub(r"[\t\n\r]", "", url).replace("\\", "/"))
        host = parts.hostname
    except ValueError:
        return "url", f"'{url}' is not a valid URL."
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        shown = f"'{scheme}:'" if scheme else "no scheme"
        return "url", f"'{url}' has {shown}: the browser opens only http:// and https:// URLs."
    if not host:
        return "url", f"'{url}' names no host."
    if is_loopback(host) or host_allowed(host, allowed_hosts):
        return None
    return "host", (
        f"The host '{host}' is not allowed: the browser goes to loopback (127.0.0.1, localhost) only, "
        "unless a glob of the setting browser.allowedHosts matches the host."
    )


def host_allowed(host: str, allowed_hosts: Sequence[str]) -> bool:
    host = host.lower().rstrip(".").strip("[]")
    return any(_glob(glob.strip()).fullmatch(host) for glob in allowed_hosts if GLOB.fullmatch(glob.strip()))


def _glob(glob: str) -> re.Pattern[str]:
    """`*` any run of characters (dots too), `?` one; case-insensitive, as Chromium matches hosts."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob.lower().rstrip(".")))


def parse_size(value: str, field: str) -> tuple[int, int]:
    """`WxH` → (width, height), each within MIN_SIDE..MAX_SIDE; ValueError names `field`."""
    found = _SIZE.match(value)
    if found is None:
        raise ValueError(f"Invalid value for parameter '{field}': expected WIDTHxHEIGHT in pixels (e.g. 900x600), got '{value}'.")
    width, height = int(found[1]), int(found[2])
    for side in (width, height):
        if not MIN_SIDE <= side <= MAX_SIDE:
            raise ValueError(f"Invalid value for parameter '{field}': {width}x{height}: each side must be {MIN_SIDE} to {MAX_SIDE} pixels.")
    return width, height


def parse_coordinate(value: str, viewport: tuple[int, int], field: str = "coordinate") -> tuple[int, int]:
    """`x,y` → (x, y) inside the viewport; ValueError names `field`."""
    found = _COORDINATE.match(value)
    if found is None:
        raise ValueError(f"Invalid value for parameter '{field}': expected x,y in pixels (e.g. 450,300), got '{value}'.")
    x, y = int(found[1]), int(found[2])
    width, height = viewport
    if not (0 <= x < width and 0 <= y < height):
        raise ValueError(
            f"Invalid value for parameter '{field}': {x},{y} is outside the {width}x{height} viewport "
            f"(x from 0 to {width - 1}, y from 0 to {height - 1})."
        )
    return x, y
