"""`modus --tcp` and `modus --ws`: one client at a time, with a token, never anyone's output but
its own. Every test talks to a real server process, byte by byte."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from server.lsp.listen import Listener, Token

WAIT = 30  # seconds: a bound on every wait, so that a missing answer fails instead of hanging


class Listening:
    """`python -m server --tcp|--ws HOST:0` as a subprocess; its stderr is read line by line."""

    def __init__(self, tmp_path: Path, transport: str, *args: str, address: str = "127.0.0.1:0", env: dict | None = None):
        self.transport = transport
        self.state_home = tmp_path / "state"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server", f"--{transport}", address, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
            env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(self.state_home),
                 **(env or {})},
        )
        self.stderr: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        listening = self.expect(r"listening on (\w+)://(\S+):(\d+) \(token: (.+)\)")
        self.host, self.port, self.where = listening[2], int(listening[3]), listening[4]

    def _read(self) -> None:
        for line in self.proc.stderr:
            self._lines.put(line.decode(errors="replace").rstrip("\n"))
        self._lines.put(None)

    def expect(self, pattern: str) -> re.Match:
        """The first stderr line from here on that matches."""
        while True:
            line = self._lines.get(timeout=WAIT)
            assert line is not None, f"the server ended without saying {pattern!r}: {self.stderr}"
            self.stderr.append(line)
            if found := re.search(pattern, line):
                return found

    def rest(self) -> list[str]:
        """Every stderr line, once the server has ended."""
        while (line := self._lines.get(timeout=WAIT)) is not None:
            self.stderr.append(line)
        return self.stderr

    @property
    def token(self) -> str:
        return Path(self.where).read_text(encoding="utf-8")

    def peer(self, **handshake) -> "Peer":
        return (TcpPeer if self.transport == "tcp" else WsPeer)(self.port, **handshake)

    def wait(self) -> int:
        return self.proc.wait(WAIT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Peer:
    notifications: list[dict]  # those skipped while waiting for a response

    def send(self, message: dict) -> None: ...
    def send_text(self, body: str) -> None: ...  # a message as JSON text, written by hand
    def receive(self) -> dict | None: ...  # None: the server closed the connection
    def close(self) -> None: ...

    def response(self, msg_id) -> dict:
        """The next response with this id (notifications in between are skipped)."""
        while True:
            message = self.receive()
            assert message is not None, "the server closed the connection"
            if "method" not in message and message.get("id") == msg_id:
                return message
            self.notifications.append(message)

    def send_initialize(self, root: Path, token: str | None = None, msg_id=0, **modus) -> None:
        options = {"modus": {"modeSwitchDelayMs": 0, **modus}, **({"token": token} if token is not None else {})}
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "initialize",
                   "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}, "initializationOptions": options}})

    def initialize(self, root: Path, token: str | None = None, msg_id=0, **modus) -> dict:
        self.send_initialize(root, token, msg_id, **modus)
        return self.response(msg_id)

    def attach(self, root: Path, token: str | None, **modus) -> "Peer":
        assert "capabilities" in self.initialize(root, token, **modus)["result"]
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return self

    def request(self, msg_id, method: str, params: dict | None = None) -> dict:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        return self.response(msg_id)

    def exit(self) -> None:
        assert self.request("bye", "shutdown")["result"] is None
        self.send({"jsonrpc": "2.0", "method": "exit"})

    def refused(self) -> dict:
        """The one error the server sends before it closes the connection."""
        message = self.receive()
        assert message is not None and "error" in message, message
        assert self.receive() is None, "the connection should be closed after the refusal"
        return message


class TcpPeer(Peer):
    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.buf = b""
        self.notifications = []

    def send(self, message: dict) -> None:
        self.send_text(json.dumps(message))

    def send_text(self, body: str) -> None:
        data = body.encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(data) + data)

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def receive(self) -> dict | None:
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                assert not self.buf, f"the connection ended inside a frame: {self.buf!r}"
                return None
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        length = int(re.search(rb"Content-Length: (\d+)", head)[1])
        while len(self.buf) < length:
            assert self._fill(), "the connection ended inside a frame"
        body, self.buf = self.buf[:length], self.buf[length:]
        return json.loads(body)

    def close(self) -> None:
        self.sock.close()


class WsPeer(Peer):
    def __init__(self, port: int, **handshake):
        self.notifications = []
        self._open = ExitStack()
        self.ws = self._open.enter_context(connect(f"ws://127.0.0.1:{port}", open_timeout=WAIT, **handshake))

    def send(self, message: dict) -> None:
        self.send_text(json.dumps(message))

    def send_text(self, body: str) -> None:
        self.ws.send(body)

    def receive(self) -> dict | None:
        try:
            return json.loads(self.ws.recv(timeout=WAIT))
        except ConnectionClosed:
            return None

    def close(self) -> None:
        self._open.close()


@pytest.fixture
def listen(tmp_path):
    started: list[Listening] = []

    def start(transport: str, *args: str, **kwargs) -> Listening:
        started.append(Listening(tmp_path, transport, *args, **kwargs))
        return started[-1]

    yield start
    for server in started:
        server.kill()


def workspace(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    return root


def open_files(pid: int) -> list[str]:
    fds = Path(f"/proc/{pid}/fd")
    return [os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink()]


both = pytest.mark.parametrize("transport", ["tcp", "ws"])


@both
def test_a_client_with_the_token_is_served_and_the_token_file_is_private(tmp_path, listen, transport):
    server = listen(transport, "--log-level", "debug")
    token_file = Path(server.where)
    assert token_file == server.state_home / "modus" / f"{transport}-{server.port}.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    token = server.token
    assert len(token) >= 32

    peer = server.peer().attach(workspace(tmp_path, "ws"), token)
    assert peer.request(1, "modus/state")["result"]["mode"]["slug"] == "code"
    peer.exit()
    assert server.wait() == 0
    assert not token_file.exists()
    assert not any(token in line for line in server.rest())  # not even at debug level


@both
@pytest.mark.parametrize(
    "first, msg_id, reason",
    [
        ("no token", 0, "no token"),
        ("wrong token", 0, "wrong token"),
        ("another request", 5, "must be 'initialize'"),
    ],
)
def test_a_connection_without_the_right_token_is_refused(tmp_path, listen, transport, first, msg_id, reason):
    server = listen(transport)
    root = workspace(tmp_path, "ws")
    intruder = server.peer()
    if first == "another request":
        intruder.send({"jsonrpc": "2.0", "id": 5, "method": "modus/state", "params": {}})
    else:
        intruder.send_initialize(root, "not-the-token" if first == "wrong token" else None)
    refusal = intruder.refused()
    assert refusal["id"] == msg_id
    message = refusal["error"]["message"]
    assert message.startswith("Unauthorized: ") and reason in message and "initializationOptions.token" in message
    assert server.token not in message

    peer = server.peer().attach(root, server.token)  # the server is still up, and the slot free
    assert peer.request(1, "modus/state")["result"]["mode"]["slug"] == "code"


@both
def test_a_second_client_is_refused_and_output_never_crosses(tmp_path, listen, transport):
    server = listen(transport)
    first = server.peer().attach(workspace(tmp_path, "one"), server.token)
    second = server.peer()
    second.send_initialize(workspace(tmp_path, "two"), server.token)
    refusal = second.refused()
    assert refusal["id"] is None and "Modus already serves a client on this address" in refusal["error"]["message"]

    state = first.request(1, "modus/modes/switch", {"slug": "ask"})["result"]
    assert state["mode"]["slug"] == "ask"
    first.exit()
    assert server.wait() == 0


@both
def test_when_the_client_leaves_the_server_waits_and_the_next_client_gets_a_fresh_server(tmp_path, listen, transport):
    server = listen(transport)
    one = workspace(tmp_path, "one")
    first = server.peer().attach(one, server.token)
    assert first.request(1, "modus/modes/switch", {"slug": "ask"})["result"]["mode"]["slug"] == "ask"
    assert any(path.startswith(str(one)) for path in open_files(server.proc.pid))  # its SQLite store
    first.close()  # no shutdown, no exit
    server.expect("the client left")
    assert server.proc.poll() is None
    assert not any(path.startswith(str(one)) for path in open_files(server.proc.pid))  # the store is closed

    second = server.peer().attach(workspace(tmp_path, "two"), server.token, yolo=True)
    state = second.request(1, "modus/state")["result"]
    assert state["yolo"] is True and state["mode"]["slug"] == "code"  # its own settings, its own workspace
    second.exit()
    assert server.wait() == 0


def test_connections_that_never_authenticate_take_neither_the_slot_nor_the_output(tmp_path, listen):
    server = listen("tcp")
    early = server.peer()  # connects and says nothing
    client = server.peer().attach(workspace(tmp_path, "ws"), server.token)
    late = server.peer()  # connects after the client attached, says nothing
    assert client.request(1, "modus/modes/switch", {"slug": "ask"})["result"]["mode"]["slug"] == "ask"
    assert client.request(2, "modus/state")["result"]["mode"]["slug"] == "ask"
    client.exit()
    assert server.wait() == 0
    assert early.receive() is None and late.receive() is None  # closed, never a byte


def test_the_log_lines_of_another_connection_do_not_reach_the_client(tmp_path, listen):
    server = listen("tcp")
    client = server.peer().attach(workspace(tmp_path, "ws"), server.token)
    assert client.request(1, "modus/state")["result"]
    intruder = TcpPeer(server.port)
    intruder.sock.sendall(b"Content-Length: 5\r\n\r\nnope!")  # logged as a bad frame, then refused
    assert "Unauthorized" in intruder.refused()["error"]["message"]
    client.notifications.clear()
    assert client.request(2, "modus/state")["result"]
    assert not [n for n in client.notifications if "bad frame" in json.dumps(n) or "refused" in json.dumps(n)]
    server.expect("bad frame")  # it was logged, on stderr only


async def test_a_connection_that_does_not_authenticate_in_time_is_closed():
    listener = Listener(Token("secret"), deadline=0.1)
    server = await asyncio.start_server(listener.serve_tcp, "127.0.0.1", 0)
    async with server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        assert await asyncio.wait_for(reader.read(), WAIT) == b""  # closed without a word
        writer.close()
    assert not listener.busy


def test_websocket_clients_may_give_the_token_at_the_handshake(tmp_path, listen):
    server = listen("ws")
    token = server.token
    by_header = server.peer(additional_headers={"Authorization": f"Bearer {token}"})
    by_header.attach(workspace(tmp_path, "ws"), None)
    assert by_header.request(1, "modus/state")["result"]["mode"]["slug"] == "code"
    by_header.close()
    server.expect("the client left")

    by_subprotocol = server.peer(subprotocols=[f"modus.token.{token}"])  # what a browser can do
    assert by_subprotocol.ws.subprotocol == f"modus.token.{token}"
    by_subprotocol.attach(workspace(tmp_path, "ws"), None)
    assert by_subprotocol.request(1, "modus/state")["result"]["mode"]["slug"] == "code"

    with pytest.raises(InvalidStatus) as refused:
        server.peer(additional_headers={"Authorization": "Bearer not-the-token"})
    assert refused.value.response.status_code == 401


def test_websocket_refuses_origins_that_are_not_allowed(tmp_path, listen):
    server = listen("ws", "--allow-origin", "http://localhost:3000")
    with pytest.raises(InvalidStatus) as refused:
        server.peer(origin="http://evil.example", subprotocols=[f"modus.token.{server.token}"])
    assert refused.value.response.status_code == 403
    page = server.peer(origin="http://localhost:3000").attach(workspace(tmp_path, "ws"), server.token)
    assert page.request(1, "modus/state")["result"]["mode"]["slug"] == "code"


def test_the_token_from_the_environment_or_a_file(tmp_path, listen):
    server = listen("tcp", env={"MODUS_TOKEN": "from-the-environment"})
    assert server.where == "$MODUS_TOKEN" and not (server.state_home / "modus").exists()
    server.peer().attach(workspace(tmp_path, "ws"), "from-the-environment").exit()
    assert server.wait() == 0

    token_file = tmp_path / "my.token"
    token_file.write_text("from-a-file\n")
    token_file.chmod(0o600)
    server = listen("tcp", "--token-file", str(token_file), env={"MODUS_TOKEN": "from-the-environment"})
    assert server.where == str(token_file)
    assert "Unauthorized" in server.peer().initialize(workspace(tmp_path, "ws"), "from-the-environment")["error"]["message"]
    server.peer().attach(workspace(tmp_path, "ws"), "from-a-file").exit()
    assert server.wait() == 0
    assert token_file.exists()  # the user's file stays


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tcp", "127.0.0.1:0", "--token-file", "nosuch.token"], "--token-file nosuch.token: cannot read it"),
        (["--tcp", "127.0.0.1:0", "--allow-origin", "http://localhost"], "--allow-origin applies to --ws only"),
        (["--token-file", "x.token"], "--token-file applies to --tcp and --ws only"),
        (["--tcp", "localhost:http"], "expected [HOST:]PORT"),
    ],
)
def test_bad_listener_options_are_named(tmp_path, args, message):
    done = subprocess.run([sys.executable, "-m", "server", *args], capture_output=True, text=True, cwd=tmp_path, timeout=WAIT)
    assert done.returncode == 2 and message in done.stderr


def test_loopback_unless_a_host_is_given_and_a_warning_when_it_is_not_loopback(tmp_path, listen):
    assert listen("tcp", address="0").host == "127.0.0.1"
    exposed = listen("tcp", address="0.0.0.0:0")
    assert any("not a loopback address" in line for line in exposed.stderr)


def test_sigterm_stops_the_server_and_removes_the_token_file(tmp_path, listen):
    server = listen("ws")
    token_file = Path(server.where)
    server.peer().attach(workspace(tmp_path, "ws"), server.token)
    server.proc.send_signal(signal.SIGTERM)
    assert server.wait() == 0
    assert not token_file.exists()


async def test_connections_waiting_to_authenticate_are_bounded_in_number_and_size(caplog):
    """A local user without the token can make the server hold little: a first message larger
    than PRE_AUTH_BODY is refused, and past MAX_WAITING waiting connections a new one is closed."""
    from server.lsp.listen import MAX_WAITING, PRE_AUTH_BODY

    listener = Listener(Token("secret"), deadline=WAIT)
    server = await asyncio.start_server(listener.serve_tcp, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        big = await asyncio.open_connection("127.0.0.1", port)
        big[1].write(b"Content-Length: %d\r\n\r\n" % (PRE_AUTH_BODY + 1))  # and not one byte of it
        answer = await asyncio.wait_for(big[0].read(), WAIT)  # refused at the header, then closed
        assert b"Unauthorized" in answer
        assert f"more than the limit of {PRE_AUTH_BODY}" in caplog.text
        waiting = [await asyncio.open_connection("127.0.0.1", port) for _ in range(MAX_WAITING)]
        async with asyncio.timeout(WAIT):
            while listener.waiting < MAX_WAITING:
                await asyncio.sleep(0.01)
        extra_reader, extra_writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(extra_reader.read(), WAIT) == b""  # closed at once
        for _, writer in [*waiting, big]:
            writer.close()
        extra_writer.close()
        await listener.close_all()


def test_a_websocket_message_before_the_token_is_bounded_too(tmp_path, listen):
    from server.lsp.listen import PRE_AUTH_BODY

    server = listen("ws")
    stranger = server.peer()
    stranger.ws.send(b"x" * (PRE_AUTH_BODY + 1))
    assert stranger.receive() is None  # closed: message too big (1009)
    assert stranger.ws.close_code == 1009
    client = server.peer().attach(workspace(tmp_path, "ws"), server.token)
    big = "y" * (2 * PRE_AUTH_BODY)  # after the token, a large message is fine
    answer = client.request(1, "modus/prompt/get", {"mode": "code", "phase": "act", "agent": "modus", "padding": big})
    assert answer["result"]["text"]


@both
def test_wire_nesting_and_surrogates_over_the_network(tmp_path, listen, transport):
    """The framing and the checks of stdio: a message nested too deeply is a parse error, a lone
    surrogate in params is invalid params, and the client goes on being served."""
    server = listen(transport)
    peer = server.peer().attach(workspace(tmp_path, "ws"), server.token)
    peer.send_text("[" * 100_000 + "]" * 100_000)
    assert peer.response(None)["error"] == {"code": -32700, "message": "Parse error: nested deeper than 128 levels"}
    peer.send_text('{"jsonrpc":"2.0","id":2,"method":"modus/state","params":{"x":%s}}' % ("[" * 500 + "]" * 500))
    assert peer.response(2)["error"] == {"code": -32700, "message": "Parse error: nested deeper than 128 levels"}
    peer.send_text(r'{"jsonrpc":"2.0","id":3,"method":"modus/chat/send","params":{"text":"ab\ud800c"}}')
    assert peer.response(3)["error"] == {
        "code": -32602, "message": "Invalid params for modus/chat/send: text: invalid Unicode: a lone surrogate (\\ud800) at character 3"}
    assert peer.request(4, "modus/state")["result"]["mode"]["slug"] == "code"
    peer.exit()
    assert server.wait() == 0
