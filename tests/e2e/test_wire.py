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

from protocol.names import PROTOCOL_VERSION
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
            stderr=subprocess.PIPE,
            cwd=workspace,
            env={**os.environ, "XDG_CONFIG_HOME": str(workspace / ".config")},
        )
        self.messages: queue.Queue[dict | None] = queue.Queue()
        self.received: list[dict] = []  # every message taken from the queue, in order
        self.stderr: list[str] = []  # read, or a full pipe would stop the server
        threading.Thread(target=self._read, daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def _read(self) -> None:
        """Messages from the server's stdout, None at its end (or once the test closed it)."""
        try:
            self._read_all()
        except (ValueError, OSError):  # the test closed the pipe: an editor gone
            self.messages.put(None)

    def _read_all(self) -> None:
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
        self.received.append(message)
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
        code = self.proc.wait(10)
        self._drainer.join(10)  # stderr read to its end
        return code


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


# ---------------------------------------------------------------- what no parser may take whole
# (issue 19): nesting beyond the limit, and lone surrogates. Each is answered (or dropped with a
# log line), no answer carries a traceback, and the server answers the next request.

DEEP = 100_000  # 200 KB of brackets: json.loads itself gives up (RecursionError)
DECODABLE = 500  # json.loads takes it; structuring, validating or echoing it could recurse too far
LIMIT = 128  # server.inbound.MAX_DEPTH
TOO_DEEP = {"code": -32700, "message": f"Parse error: nested deeper than {LIMIT} levels"}
LONE = r"ab\ud800c"  # as JSON text: a lone high surrogate, the third character


def nested(levels: int, kind: str = "[") -> str:
    """JSON text of `levels` nested arrays, or objects {"a": …}."""
    return "[" * levels + "]" * levels if kind == "[" else '{"a":' * levels + "1" + "}" * levels


def frame(body: str) -> bytes:
    data = body.encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def request(method: str, params: str, msg_id: int = 5) -> str:
    """A request as JSON text (json.dumps itself cannot write what these tests send)."""
    return '{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}' % (msg_id, method, params)


def code_action(data: str) -> str:
    """textDocument/codeAction params with one diagnostic whose `data` is `data` (5 levels down
    from the message's top); the answer's quick fix carries the diagnostic back."""
    span = '{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}'
    return ('{"textDocument":{"uri":"file:///x.py"},"range":%s,"context":{"diagnostics":'
            '[{"range":%s,"message":"m","data":%s}]}}' % (span, span, data))


def no_traceback(server: RawServer) -> None:
    assert "traceback" not in json.dumps(server.received).lower()


def chat_works(server: RawServer, msg_id: int) -> bool:
    """A message is sent, stored and answered (the turn ends before this returns)."""

    def ended() -> int:
        return sum(m.get("method") == "modus/update" and m["params"]["kind"] == "turn_ended" for m in server.received)

    before = ended()
    server.send({"jsonrpc": "2.0", "id": msg_id, "method": "modus/chat/send", "params": {"text": "again"}})
    server.response(msg_id)
    while ended() == before:
        server.receive()
    return True


def logged(server: RawServer, *words: str) -> list[str]:
    """The window/logMessage lines received so far that hold all of `words`."""
    lines = [m["params"]["message"] for m in server.received if m.get("method") == "window/logMessage"]
    return [line for line in lines if all(w in line for w in words)]


#: (what it is, the message, the id its error carries): each answered -32700, one server for all
TOO_DEEP_REQUESTS = [
    ("body", nested(DEEP), None),
    ("body-objects", nested(DEEP, "{"), None),
    ("chat-undecodable", request("modus/chat/send", '{"text":"hi","x":%s}' % nested(DEEP)), None),  # its id cannot be read
    ("chat", request("modus/chat/send", '{"text":"hi","x":%s}' % nested(DECODABLE)), 5),
    ("chat-objects", request("modus/chat/send", '{"text":"hi","x":%s}' % nested(DECODABLE, "{")), 5),
    ("params", request("modus/state", nested(DECODABLE, "{")), 5),
    ("code-action", request("textDocument/codeAction", code_action(nested(DECODABLE))), 5),  # the answer would echo it
    ("command", request("workspace/executeCommand", '{"command":"modus.switchMode","arguments":[%s]}' % nested(DECODABLE)), 5),
    ("unknown-method", request("modus/nosuch", nested(DECODABLE)), 5),
    ("id", '{"jsonrpc":"2.0","id":%s,"method":"modus/state","params":{}}' % nested(DECODABLE), None),  # in the id
    ("limit+1", request("modus/chat/send", '{"text":"hi","x":%s}' % nested(LIMIT - 1)), 5),  # one level too many
]


def test_wire_nesting_too_deep_is_a_parse_error_and_the_server_goes_on(raw):
    for n, (name, body, msg_id) in enumerate(TOO_DEEP_REQUESTS):
        raw.send_bytes(frame(body))
        assert raw.response(msg_id)["error"] == TOO_DEEP, name
        assert state_works(raw, 100 + n), name
        assert chat_works(raw, 200 + n), name
    no_traceback(raw)
    assert raw.close() == 0


@pytest.mark.parametrize(
    "body, words",
    [
        ('{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"modus":{"x":%s}}}}'
         % nested(DECODABLE), ["dropping workspace/didChangeConfiguration"]),
        ('{"jsonrpc":"2.0","method":"$/setTrace","params":%s}' % nested(DECODABLE, "{"), ["dropping $/setTrace"]),
        ('{"jsonrpc":"2.0","id":77,"result":%s}' % nested(DECODABLE), ["the answer to 77"]),  # nothing waits for it
    ],
    ids=["configuration", "notification", "response"],
)
def test_wire_nesting_too_deep_in_a_notification_or_a_response_is_dropped_with_a_log_line(raw, body, words):
    raw.send_bytes(frame(body))
    assert state_works(raw, 9)
    assert [m for m in raw.received if "error" in m] == []
    assert len(logged(raw, *words, f"nested deeper than {LIMIT} levels")) == 1
    no_traceback(raw)


def test_wire_nesting_up_to_the_limit_is_served(raw):
    data = nested(LIMIT - 5)  # the message is LIMIT levels deep
    raw.send_bytes(frame(request("textDocument/codeAction", code_action(data))))
    [fix] = [action for action in raw.response(5)["result"] if action.get("diagnostics")]
    assert json.dumps(fix["diagnostics"][0]["data"], separators=(",", ":")) == data
    raw.send_bytes(frame(request("modus/chat/send", '{"text":"hi","x":%s}' % nested(LIMIT - 2, "{"), 6)))
    assert "conversationId" in raw.response(6)["result"]
    no_traceback(raw)


def test_wire_nesting_in_initialization_options(tmp_path):
    server = RawServer(tmp_path)
    initialize = ('{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"processId":null,"rootUri":"%s",'
                  '"capabilities":{},"initializationOptions":{"modus":{"x":%s}}}}')
    try:
        server.send_bytes(frame(initialize % (0, tmp_path.as_uri(), nested(DECODABLE))))
        assert server.response(0)["error"] == TOO_DEEP
        server.send_bytes(frame(initialize % (1, tmp_path.as_uri(), nested(DEEP, "{"))))
        assert server.response(None)["error"] == TOO_DEEP
        server.send_bytes(frame(initialize % (2, tmp_path.as_uri(), "{}")))  # initialize again: served
        assert "capabilities" in server.response(2)["result"]
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        assert state_works(server, 3)
        no_traceback(server)
        assert server.close() == 0
    finally:
        server.proc.kill()


def invalid_unicode(method: str, field: str, at: int) -> dict:
    return {"code": -32602, "message": f"Invalid params for {method}: {field}: invalid Unicode: a lone surrogate (\\ud800) at character {at}"}


def command(name: str, argument: str) -> str:
    return '{"command":"%s","arguments":[%s]}' % (name, argument)


RANGE = '{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}'


#: (method, params, the field named, the character the surrogate is at): each answered -32602
LONE_SURROGATES = [
        ("modus/chat/send", '{"text":"%s"}' % LONE, "text", 3),
        ("modus/chat/send", '{"text":"hi","conversationId":"%s"}' % LONE, "conversationId", 3),
        ("modus/chat/history", '{"conversationId":"%s"}' % LONE, "conversationId", 3),
        ("modus/modes/switch", '{"slug":"%s"}' % LONE, "slug", 3),
        ("modus/prompt/get", '{"mode":"%s"}' % LONE, "mode", 3),
        ("modus/plan/approve", '{"feedback":"%s"}' % LONE, "feedback", 3),
        ("workspace/executeCommand", command("modus.switchMode", '"%s"' % LONE), "arguments.0", 3),
        ("workspace/executeCommand", command("modus.planSelection", '{"uri":"file:///%s.py","range":%s}' % (LONE, RANGE)), "arguments.0.uri", 11),  # file:///ab…
        ("workspace/executeCommand", command("modus.startInMode", '{"mode":"code","uri":"file:///a.py","range":%s,"prompt":"%s"}' % (RANGE, LONE)),
         "arguments.0.prompt", 3),
        ("textDocument/codeAction", code_action('"%s"' % LONE), "context.diagnostics.0.data", 3),
]


def test_wire_surrogate_in_a_request_is_invalid_params_naming_the_field(raw):
    for n, (method, params, field, at) in enumerate(LONE_SURROGATES):
        raw.send_bytes(frame(request(method, params)))
        assert raw.response(5)["error"] == invalid_unicode(method, field, at), (method, field)
        assert state_works(raw, 100 + n)
        assert chat_works(raw, 200 + n)
    no_traceback(raw)
    assert raw.close() == 0
    assert not [line for line in raw.stderr if "Traceback" in line or "Logging error" in line]


def test_wire_surrogate_in_a_key_and_in_an_unknown_method(raw):
    raw.send_bytes(frame(request("modus/chat/send", '{"text":"hi","%s":1}' % LONE)))
    assert raw.response(5)["error"] == {
        "code": -32602,
        "message": "Invalid params for modus/chat/send: params: invalid Unicode in a key: a lone surrogate (\\ud800) at character 3"}
    raw.send_bytes(frame('{"jsonrpc":"2.0","id":6,"method":"modus/%s","params":{}}' % LONE))
    assert raw.response(6)["error"] == {
        "code": -32600, "message": "Invalid Request: method: invalid Unicode: a lone surrogate (\\ud800) at character 9"}
    assert state_works(raw, 9)
    no_traceback(raw)


def test_wire_surrogate_in_a_notification_is_replaced_and_logged(raw):
    """A notification cannot be answered: its lone surrogates become U+FFFD (one UTF-16 unit for
    another, so an editor's document keeps its positions), with a log line."""
    settings = '{"settings":{"modus":{"members":[{"handle":"ana","name":"%s"}]}}}' % LONE
    raw.send_bytes(frame('{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":%s}' % settings))
    raw.send({"jsonrpc": "2.0", "id": 5, "method": "modus/agents/list", "params": {}})
    assert raw.response(5)["result"]["members"] == [{"handle": "ana", "name": "ab\ufffdc"}]
    assert len(logged(raw, "workspace/didChangeConfiguration", "settings.modus.members.0.name", "U+FFFD")) == 1
    assert chat_works(raw, 9)
    no_traceback(raw)


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
    assert version.returncode == 0 and version.stdout.strip() == f"modus {__version__} (protocol {PROTOCOL_VERSION})"
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


def test_wire_a_client_gone_in_the_middle_of_a_turn_is_told_nothing_more(tmp_path):
    """The editor dies while a turn runs: the server's writes fail. Each failure is logged once
    (telling the client that telling it failed would fail again, and again: a flood of
    tracebacks until Python's recursion limit), and the server ends with its input."""
    steps = [{"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]} for _ in range(300)]
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "script.json").write_text(json.dumps({"turns": steps}))
    server = RawServer(tmp_path)
    settings = {"modus": {"models": {"default": {"provider": "scripted", "script": "script.json"}}, "maxRequestsPerTurn": 1000, "checkpoints": False}}
    server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}, "initializationOptions": settings}})
    server.response(0)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    server.send({"jsonrpc": "2.0", "id": 1, "method": "modus/chat/send", "params": {"text": "read it all"}})
    while server.receive().get("params", {}).get("kind") != "tool_call":
        pass
    server.proc.stdout.close()  # the editor is gone: its end of both pipes closes
    server.proc.stdin.close()
    assert server.proc.wait(20) is not None
    server._drainer.join(10)
    log = "".join(server.stderr)
    assert "RecursionError" not in log and "maximum recursion depth" not in log
    assert log.count("Traceback") <= 5, log
