"""browser_action over stdio against a page this test serves on 127.0.0.1: a real headless
Chromium (Debian's, through Playwright) launched on approval, clicked, typed into, scrolled,
resized and closed; closed at the turn's end and on cancel (no Chromium process left under the
server); held to loopback and browser.allowedHosts, redirects and links included."""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from protocol import methods

from .conftest import script
from .editor import Editor

pytestmark = pytest.mark.skipif(not os.access(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"), os.X_OK), reason="no Chromium")

PAGE = b"""<!doctype html><html><head><title>Start</title>
<style>body{margin:0} .box{position:absolute;left:50px;width:200px;height:60px}</style></head><body>
<button class="box" style="top:40px" onclick="document.title='Clicked'; console.log('clicked the button')">Click me</button>
<input class="box" style="top:140px" onkeydown="if(event.key==='Enter'){document.title='Entered: '+this.value; console.log('entered '+this.value)}">
<div class="box" style="top:240px;background:#ccc" onmouseover="document.title='Hovered'">hover</div>
<a class="box" style="top:340px" href="OTHER/page">away</a>
<div style="height:3000px"></div>
</body></html>"""


class Site:
    """An HTTP server on one loopback address, counting the requests it got."""

    def __init__(self, address: str):
        site = self
        self.hits: list[str] = []
        self.other = ""

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                site.hits.append(self.path)
                if self.path.startswith("/redirect"):
                    self.send_response(302)
                    self.send_header("Location", f"{site.other}/page")
                    self.end_headers()
                    return
                body = PAGE.replace(b"OTHER", site.other.encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((address, 0), Handler)
        self.url = f"http://{address}:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sites():
    """The test's page on 127.0.0.1, and another host (127.0.0.2: loopback to Linux, but not
    to Modus's policy) that no request may reach unless browser.allowedHosts names it."""
    home, other = Site("127.0.0.1"), Site("127.0.0.2")
    home.other, other.other = other.url, home.url
    yield home, other
    home.close()
    other.close()


def call(action: str, **params) -> dict:
    return {"toolCalls": [{"name": "browser_action", "arguments": {"action": action, **params}}]}


def chromium_under(pid: int) -> list[int]:
    """The Chromium processes among `pid`'s descendants."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent:
                frontier.append(child)
                try:
                    if b"chromium" in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.append(child)
                except OSError:
                    pass
    return found


def results(editor: Editor) -> list[dict]:
    return [u for u in editor.of_kind("tool_call") if u["name"] == "browser_action" and u["status"] in ("completed", "failed")]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


async def test_launch_click_type_press_hover_scroll_resize_close(editor: Editor, workspace: Path, sites):
    home, _ = sites
    await editor.start(
        script(
            workspace,
            call("launch", url=f"{home.url}/"),
            call("click", coordinate="150,70"),
            call("click", coordinate="150,170"),
            call("type", text="hello"),
            call("press", text="Enter"),
            call("hover", coordinate="150,270"),
            call("scroll_down"),
            call("scroll_up"),
            call("resize", size="640x480"),
            call("close"),
            {"text": "Done."},
        )
    )
    ended = await editor.chat("try the page")
    server_pid = editor.client._server.pid
    left = chromium_under(server_pid)
    shots = editor.of_kind("browser")
    images = [await editor.request(methods.CHAT_IMAGE, {"id": u["screenshotId"]}) for u in shots]

    assert ended["outcome"] == "completed"
    # only launch asked, and it said where the browser goes
    [asked] = editor.approvals
    assert asked["tool"] == "browser_action" and asked["params"]["action"] == "launch"
    assert home.url in asked["title"]
    done = results(editor)
    assert [u["status"] for u in done] == ["completed"] * 10, [u.get("error") for u in done]
    text = [u["result"] for u in done]
    assert "Title: Start" in text[0] and f"URL: {home.url}/" in text[0]
    assert "Title: Clicked" in text[1] and "[log] clicked the button" in text[1]
    assert "Console since the last action: (nothing)" in text[2]  # the lines are those since the last action
    assert "Typed 5 characters" in text[3]
    assert "Title: Entered: hello" in text[4] and "[log] entered hello" in text[4]
    assert "Title: Hovered" in text[5]
    assert "Scrolled down one page (at y=600" in text[6] and "Scrolled up one page (at y=0" in text[7]
    assert "Resized the viewport to 640x480" in text[8]
    assert text[9] == "The browser is closed."
    # every action but close: a `browser` update, its screenshot a PNG of the viewport's size
    assert [u["action"] for u in shots] == ["launch", "click", "click", "type", "press", "hover", "scroll_down", "scroll_up", "resize"]
    assert [u["title"] for u in shots][:2] == ["Start", "Clicked"]
    assert all(u["url"] == f"{home.url}/" for u in shots)
    calls = [u["toolCallId"] for u in done]
    assert [u["toolCallId"] for u in shots] == calls[:9]
    assert [i["mimeType"] for i in images] == ["image/png"] * 9
    sizes = [png_size(base64.b64decode(i["data"])) for i in images]
    assert sizes == [(900, 600)] * 8 + [(640, 480)]
    # the model got each screenshot with its result
    assert [[i["id"] for i in u["images"]] for u in done[:9]] == [[u["screenshotId"]] for u in shots]
    assert left == []


async def test_the_browser_closes_when_the_turn_ends(editor: Editor, workspace: Path, sites):
    home, _ = sites
    await editor.start(script(workspace, call("launch", url=f"{home.url}/"), {"text": "Looked."}, call("click", coordinate="10,10"), {"text": "ok"}))
    pid = editor.client._server.pid
    ended = await editor.chat("look")
    left = chromium_under(pid)
    again = await editor.chat("click")  # a new turn: the browser is gone
    assert ended["outcome"] == "completed" and left == []
    [first, second] = results(editor)
    assert first["status"] == "completed"
    assert second["status"] == "failed" and second["error"]["message"].startswith("No browser is open in this conversation")
    assert again["outcome"] == "completed"


async def test_the_browser_closes_when_the_turn_is_cancelled(editor: Editor, workspace: Path, sites):
    home, _ = sites
    never: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
    editor.decide = lambda request: {"decision": "approve"} if request.get("tool") == "browser_action" else never
    command = {"toolCalls": [{"name": "execute_command", "arguments": {"command": "true"}}]}
    await editor.start(script(workspace, call("launch", url=f"{home.url}/"), command, {"text": "ok"}))
    pid = editor.client._server.pid
    sent = await editor.request(methods.CHAT_SEND, {"text": "look"})
    await editor.wait_for(lambda: len(editor.approvals) == 2, timeout=60)  # the browser is open; the command waits
    running = chromium_under(pid)
    await editor.request(methods.CHAT_CANCEL, {"conversationId": sent["conversationId"]})
    [ended] = await editor.wait_for(lambda: editor.of_kind("turn_ended"))
    left = chromium_under(pid)
    assert running != [] and ended["outcome"] == "cancelled"
    assert left == []


async def test_hosts_other_than_loopback_need_allowed_hosts(editor: Editor, workspace: Path, sites):
    home, other = sites
    await editor.start(
        {**script(
            workspace,
            call("launch", url=f"{other.url}/"),  # refused before anything starts
            call("launch", url="file:///etc/passwd"),
            call("launch", url=f"{home.url}/redirect"),  # a redirect to the other host
            call("launch", url=f"{home.url}/"),
            call("click", coordinate="150,370"),  # a link to the other host
            {"text": "Blocked."},
        ), "maxConsecutiveMistakes": 10}
    )
    await editor.chat("look")
    [host, scheme, redirect, launched, link] = results(editor)
    assert host["error"]["type"] == "HostNotAllowed"
    assert host["error"]["message"].startswith("The host '127.0.0.2' is not allowed")
    assert "browser.allowedHosts" in host["error"]["message"]
    assert scheme["error"]["type"] == "InvalidParams" and "'file:'" in scheme["error"]["message"]
    assert redirect["status"] == "failed" and "blocked a request to 127.0.0.2" in redirect["error"]["message"]
    assert launched["status"] == "completed"
    assert link["status"] == "completed", link.get("error")
    assert "Blocked: blocked a request to 127.0.0.2" in link["result"]
    assert other.hits == []  # nothing reached it
    assert [a["params"]["url"] for a in editor.approvals] == [f"{home.url}/redirect", f"{home.url}/"]  # refused ones asked nothing


async def test_allowed_hosts_let_the_browser_go_there(editor: Editor, workspace: Path, sites):
    home, other = sites
    await editor.start(
        {**script(workspace, call("launch", url=f"{home.url}/redirect"), call("click", coordinate="150,370"), {"text": "ok"}),
         "browser": {"allowedHosts": ["127.0.0.*"]}, "autoApprove": {"browser": True}}
    )
    await editor.chat("look")
    [redirected, link] = results(editor)
    assert redirected["status"] == "completed", redirected.get("error")
    assert f"URL: {other.url}/page" in redirected["result"]
    assert f"URL: {home.url}/page" in link["result"]  # its link leads back home
    assert other.hits == ["/page"]
    assert editor.approvals == []  # autoApprove.browser


async def test_bad_coordinates_and_sizes_name_the_field(editor: Editor, workspace: Path, sites):
    home, _ = sites
    await editor.start(
        {**script(
            workspace,
            call("launch", url=f"{home.url}/"),
            call("click", coordinate="abc"),
            call("hover", coordinate="900,10"),
            call("resize", size="10x10"),
            call("press", text="NoSuchKey"),
            {"text": "ok"},
        ), "browser": {"viewport": "800x500"}, "maxConsecutiveMistakes": 10}
    )
    await editor.chat("look")
    [launched, *bad] = results(editor)
    assert launched["status"] == "completed" and "(800x500 pixels)" in launched["result"]
    messages = [u["error"]["message"] for u in bad]
    assert [u["error"]["type"] for u in bad] == ["InvalidParams", "InvalidParams", "InvalidParams", "ToolError"]
    assert messages[0].startswith("Invalid value for parameter 'coordinate': expected x,y in pixels")
    assert messages[1].startswith("Invalid value for parameter 'coordinate': 900,10 is outside the 800x500 viewport")
    assert messages[2].startswith("Invalid value for parameter 'size': 10x10: each side must be 200 to 4096 pixels")
    assert messages[3].startswith("Invalid value for parameter 'text': 'NoSuchKey' is not a key name")


async def test_a_page_that_never_answers_fails_the_launch_in_time(editor: Editor, workspace: Path):
    import socket

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections, never answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
    try:
        await editor.start({**script(workspace, call("launch", url=url), {"text": "ok"}), "browser": {"timeoutSeconds": 2}})
        await editor.chat("look")
    finally:
        silent.close()
    [launch] = results(editor)
    assert launch["error"]["type"] == "ToolError"
    assert launch["error"]["message"].startswith("browser_action 'launch' timed out after 2 s")
