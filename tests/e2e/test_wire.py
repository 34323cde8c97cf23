"""The wire itself: malformed frames, the other transports, the command line."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from server import __version__
from server.lsp.server import converter
from server.lsp.transport import Frames, ParseError


class RawServer:
    """The server over stdio, spoken to byte by byte."""

    def __init__(self, workspace: Path, command: list[str] | None = None):
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workspace,
            env={**os.environ, "XDG_CONFIG_HOME": str(workspace / ".config")},
        )
        self.messages: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read(self) -> None:
        """Messages from the server's stdout, None at its end."""
        length = None
        while line := self.proc.stdout.readline():
            if line == b"\r\n":
                self.messages.put(json.loads(self.proc.stdout.read(length)))
                continue
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        self.messages.put(None)

    def receive(self) -> dict:
        message = self.messages.get(timeout=30)  # a bound, so that a missing answer fails instead of hanging
        assert message is not None, "the server closed its output"
        return message

    def response(self, msg_id) -> dict:
        """The next response with this id (notifications in between are skipped)."""
        while True:
            message = self.receive()
            if "method" not in message and message.get("id") == msg_id:
                return message

    def close(self) -> int:
        self.send({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"})
        self.response("bye")
        self.send({"jsonrpc": "2.0", "method": "exit"})
        return self.proc.wait(10)


@pytest.fixture
def raw(tmp_path):
    server = RawServer(tmp_path)
    server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    assert "capabilities" in server.response(0)["result"]
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield server
    if server.proc.poll() is None:
        server.proc.kill()


def state_works(server: RawServer, msg_id: int) -> bool:
    server.send({"jsonrpc": "2.0", "id": msg_id, "method": "modus/state", "params": {}})
    return server.response(msg_id)["result"]["mode"]["slug"] == "code"


@pytest.mark.parametrize(
    "frame, code",
    [
        (b'Content-Length: 9\r\n\r\n{"jsonrpc', -32700),  # JSON that does not parse
        (b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc", -32700),  # not even UTF-8
        (b'Content-Length: 7\r\n\r\n[1,2,3]', -32600),  # a batch / not an object
        (b'Content-Length: 2\r\n\r\n{}', -32600),  # no jsonrpc version
        (b"X-Nonsense: yes\r\n\r\n", -32700),  # a frame without Content-Length
    ],
)
def test_malformed_frames_are_answered_and_the_server_keeps_serving(raw, frame, code):
    raw.send_bytes(frame)
    assert raw.response(None)["error"]["code"] == code
    assert state_works(raw, 1)
    assert raw.close() == 0


def framed(message: dict, declared: int | None = None) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) if declared is None else declared) + body


STATE = {"jsonrpc": "2.0", "id": 2, "method": "modus/state", "params": {}}


@pytest.mark.parametrize(
    "wrong",
    [
        framed(STATE, 10),  # too short: the rest of the body is left over
        framed(STATE, len(json.dumps(STATE)) - 4),  # too short by a little
        framed(STATE, 500),  # too long: the next frame's header is read as body
        framed(STATE, len(json.dumps(STATE)) + 3),  # too long by less than a header
        b"Content-Length: 99999999999\r\n\r\n" + json.dumps(STATE).encode(),  # beyond MAX_BODY
    ],
    ids=["short", "short-by-little", "long", "long-by-little", "huge"],
)
def test_a_wrong_content_length_is_answered_and_the_stream_recovers(raw, wrong):
    raw.send_bytes(wrong + framed({**STATE, "id": 3}))
    assert raw.response(None)["error"]["code"] == -32700
    assert raw.response(3)["result"]["mode"]["slug"] == "code"
    assert state_works(raw, 4)
    assert raw.close() == 0


def test_the_framing_does_not_depend_on_how_the_bytes_arrive():
    stream = framed(STATE, 10) + b"junk\r\n" + framed(STATE) + framed(STATE, 500) + framed({**STATE, "id": 3})
    whole = Frames().feed(stream)
    frames = Frames()
    assert [m for byte in stream for m in frames.feed(bytes([byte]))] == whole
    assert [type(m) for m in whole] == [ParseError, dict, ParseError, dict]


def test_garbage_before_a_header_is_skipped(raw):
    raw.send_bytes(b"hello there\r\n" + framed({**STATE, "id": 3}))
    assert raw.response(3)["result"]["mode"]["slug"] == "code"


def test_a_wrong_frame_then_a_good_one_sent_separately(raw):
    raw.send_bytes(framed(STATE, 200))
    raw.send_bytes(framed({**STATE, "id": 3}))
    assert raw.response(None)["error"]["code"] == -32700
    assert raw.response(3)["result"]["mode"]["slug"] == "code"


@pytest.mark.parametrize("bad_id", [{"a": 1}, [1], True, 1.5])
def test_a_request_with_an_id_that_is_not_an_integer_or_string_is_invalid(raw, bad_id):
    raw.send({"jsonrpc": "2.0", "id": bad_id, "method": "modus/state", "params": {}})
    error = raw.response(None)["error"]
    assert error["code"] == -32600 and "id" in error["message"]
    assert state_works(raw, 5)


def test_invalid_params_of_a_standard_method_name_the_field(raw):
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "textDocument/didOpen", "params": {"textDocument": {}}})
    raw.send({"jsonrpc": "2.0", "id": 8, "method": "workspace/executeCommand", "params": {"arguments": []}})
    error = raw.response(8)["error"]
    assert error["code"] == -32602 and "command" in error["message"]
    assert state_works(raw, 9)


def test_params_omitted_entirely(raw):
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "modus/modes/list"})
    assert raw.response(3)["result"]["current"] == "code"


def test_requests_before_initialize_are_refused_politely(tmp_path):
    server = RawServer(tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "modus/state", "params": {}})
        error = server.response(1)["error"]
        assert error["code"] == -32002 and "initialize" in error["message"]
        server.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert server.response(2)["error"]["code"] == -32002
    finally:
        server.proc.kill()


def test_notifications_before_initialize_are_dropped(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    server = RawServer(tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})  # would open a session in cwd
        server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}})
        assert "capabilities" in server.response(0)["result"]
        server.send({"jsonrpc": "2.0", "id": 1, "method": "modus/state", "params": {}})
        error = server.response(1)["error"]  # initialize, but not yet initialized
        assert error["code"] == -32002 and "initialized" in error["message"]
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        assert state_works(server, 2)
        assert not (tmp_path / ".modus").exists() and (workspace / ".modus").exists()
        assert server.close() == 0
    finally:
        server.proc.kill()


def test_exit_before_initialize_ends_the_process(tmp_path):
    server = RawServer(tmp_path)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.proc.wait(10) == 1  # no shutdown first


def test_the_modus_console_script_serves_stdio(tmp_path):
    server = RawServer(tmp_path, [str(Path(sys.executable).parent / "modus"), "serve"])
    server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    assert server.response(0)["result"]["serverInfo"]["name"] == "modus"
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    assert state_works(server, 1)
    assert server.close() == 0


def test_version_and_help():
    version = subprocess.run([sys.executable, "-m", "server", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.strip() == f"modus {__version__}"
    helped = subprocess.run([sys.executable, "-m", "server", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--tcp [HOST:]PORT" in helped.stdout and "--ws [HOST:]PORT" in helped.stdout
    bad = subprocess.run([sys.executable, "-m", "server", "--tcp", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "expected [HOST:]PORT" in bad.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("transport", ["tcp", "ws"])
async def test_tcp_and_websocket_transports(tmp_path, transport):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", f"--{transport}", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / ".config"), "MODUS_TOKEN": "a-token"},
    )
    try:
        assert b"listening" in proc.stderr.readline()  # ready
        client = LanguageClient("test", "1", converter_factory=converter)
        await (client.start_tcp if transport == "tcp" else client.start_ws)("127.0.0.1", port)
        result = await client.initialize_async(
            lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri(),
                                 initialization_options={"token": "a-token"})
        )
        assert result.capabilities.experimental == {"modus": {"protocolVersion": 1}}
        client.initialized(lsp.InitializedParams())
        state = await client.protocol.send_request_async("modus/modes/switch", {"slug": "ask"})
        assert state["mode"]["slug"] == "ask"
        await client.shutdown_async(None)
        client.exit(None)
        assert await asyncio.to_thread(proc.wait, 10) == 0  # the loop must run to send `exit`
        await client.stop()
    finally:
        if proc.poll() is None:
            proc.kill()
