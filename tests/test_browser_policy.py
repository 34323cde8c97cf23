"""Where the browser may go, as a table: URL, browser.allowedHosts → allowed, or the refusal;
and the shapes of coordinates and sizes (server/browser/policy.py). The real Chromium is in
tests/e2e/test_browser.py."""

from __future__ import annotations

import pytest

from server.browser import policy
from server.browser.driver import resolver_rules

NOT_ALLOWED = "~is not allowed: the browser goes to loopback"

# url, allowedHosts, expected: None (allowed) or the refusal (exact, or a fragment after "~")
CASES = [
    # loopback: always
    ("http://127.0.0.1:8000/", [], None),
    ("http://localhost:3000/app", [], None),
    ("https://LOCALHOST./", [], None),
    ("http://app.localhost:5173/", [], None),
    ("http://[::1]:8080/", [], None),
    # other hosts: only through a glob
    ("http://127.0.0.2/", [], NOT_ALLOWED),  # loopback to Linux, another host to Chromium's rules
    ("https://example.com/", [], "~The host 'example.com' is not allowed"),
    ("https://example.com/", ["example.com"], None),
    ("https://EXAMPLE.com/", ["example.COM"], None),
    ("https://docs.example.com/", ["*.example.com"], None),
    ("https://example.com/", ["*.example.com"], NOT_ALLOWED),  # the glob wants a subdomain
    ("https://example.com.evil.net/", ["example.com"], NOT_ALLOWED),
    ("https://evil-example.com/", ["*.example.com"], NOT_ALLOWED),
    ("http://10.0.0.5/", ["10.0.0.?"], None),
    ("http://10.0.0.15/", ["10.0.0.?"], NOT_ALLOWED),
    ("http://localhost.evil.net/", [], NOT_ALLOWED),
    ("http://127.0.0.1.nip.io/", [], NOT_ALLOWED),
    ("http://2130706433/", [], NOT_ALLOWED),  # 127.0.0.1 spelled as a number: not by name
    ("http://evil.net\\@127.0.0.1/", [], NOT_ALLOWED),
    ("http://example.com/", ["[a-z]*"], NOT_ALLOWED),  # not a glob of ours: ignored
    ("http://example.com/", ["x, MAP * 127.0.0.1"], NOT_ALLOWED),  # nothing smuggled into Chromium's rules
    # schemes
    ("file:///etc/passwd", [], "'file:///etc/passwd' has 'file:': the browser opens only http:// and https:// URLs."),
    ("javascript:alert(1)", [], "~has 'javascript:'"),
    ("data:text/html,hi", [], "~has 'data:'"),
    ("chrome://settings", ["*"], "~has 'chrome:'"),
    ("ftp://127.0.0.1/", [], "~has 'ftp:'"),
    ("//127.0.0.1/", [], "~has no scheme"),
    ("http:///path", [], "'http:///path' names no host."),
    ("http://[::1/", [], "'http://[::1/' is not a valid URL."),
]


@pytest.mark.parametrize("url, allowed, expected", CASES)
def test_where_the_browser_may_go(url, allowed, expected):
    found = policy.refusal(url, allowed)
    if expected is None:
        assert found is None
    elif expected.startswith("~"):
        assert found is not None and expected[1:] in found, found
    else:
        assert found == expected


def test_chromium_is_told_the_same_hosts():
    assert resolver_rules(["*.example.com", "bad glob, MAP * 1.2.3.4", "docs.python.org"]) == (
        "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE *.localhost, EXCLUDE 127.0.0.1, EXCLUDE ::1, "
        "EXCLUDE *.example.com, EXCLUDE docs.python.org"
    )


@pytest.mark.parametrize(
    "value, expected",
    [
        ("450,300", (450, 300)),
        (" 0 , 0 ", (0, 0)),
        ("899,599", (899, 599)),
        ("900,10", "Invalid value for parameter 'coordinate': 900,10 is outside the 900x600 viewport (x from 0 to 899, y from 0 to 599)."),
        ("-1,5", "~is outside the 900x600 viewport"),
        ("12", "Invalid value for parameter 'coordinate': expected x,y in pixels (e.g. 450,300), got '12'."),
        ("1.5,2", "~expected x,y in pixels"),
        ("", "~expected x,y in pixels"),
    ],
)
def test_coordinates(value, expected):
    if isinstance(expected, tuple):
        assert policy.parse_coordinate(value, (900, 600)) == expected
        return
    with pytest.raises(ValueError) as caught:
        policy.parse_coordinate(value, (900, 600))
    assert expected[1:] in str(caught.value) if expected.startswith("~") else str(caught.value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("900x600", (900, 600)),
        ("1280 X 720", (1280, 720)),
        ("200x4096", (200, 4096)),
        ("199x600", "Invalid value for parameter 'size': 199x600: each side must be 200 to 4096 pixels."),
        ("900x5000", "~each side must be 200 to 4096 pixels"),
        ("900*600", "Invalid value for parameter 'size': expected WIDTHxHEIGHT in pixels (e.g. 900x600), got '900*600'."),
        ("wide", "~expected WIDTHxHEIGHT"),
    ],
)
def test_sizes(value, expected):
    if isinstance(expected, tuple):
        assert policy.parse_size(value, "size") == expected
        return
    with pytest.raises(ValueError) as caught:
        policy.parse_size(value, "size")
    assert expected[1:] in str(caught.value) if expected.startswith("~") else str(caught.value) == expected
