"""The LSP layer's own mechanics, in process: pygls's protocol with Modus's subclass."""

from __future__ import annotations

import asyncio
import json

from server.lsp.server import ModusServer
from server.lsp.transport import dispatch


class Sink:
    def __init__(self):
        self.messages: list[dict] = []

    def write(self, data: bytes) -> None:
        self.messages.append(json.loads(data.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


async def test_a_generator_handler_that_waits_leaves_nothing_behind():
    """A `modus/*` request that yields to a coroutine (a refresh, chat/send) must not leave its
    future in pygls's table of pending requests: a long session would keep every one."""
    server = ModusServer()
    sink = Sink()
    server.protocol.set_writer(sink)

    async def later(n):
        await asyncio.sleep(0)
        return {"n": n}

    @server.feature("test/wait")
    def wait(params):
        result = yield later, (params["n"],), {}  # custom params stay plain dicts
        return result

    def send(body: dict) -> None:
        dispatch(server.protocol, {"jsonrpc": "2.0", **body})

    send({"id": 0, "method": "initialize", "params": {"processId": None, "capabilities": {}}})
    for n in range(1, 51):
        send({"id": n, "method": "test/wait", "params": {"n": n}})
    for _ in range(20):
        await asyncio.sleep(0)
    answers = {m["id"]: m["result"] for m in sink.messages if m.get("id") not in (None, 0)}
    assert answers == {n: {"n": n} for n in range(1, 51)}
    assert server.protocol._request_futures == {}


def test_pydantic_s_plugin_loader_is_what_the_server_replaces():
    """server.startup gives pydantic a plugin loader that finds no plugin: pydantic's own must still
    be a module `pydantic.plugin._loader` whose `get_plugins()` takes nothing and is all that
    pydantic takes from it. A pydantic that changes this fails here, not in a user's session."""
    import inspect

    import pydantic.plugin._loader as loader
    import pydantic.plugin._schema_validator as user

    assert inspect.signature(loader.get_plugins).parameters == {}
    assert "from ._loader import get_plugins" in inspect.getsource(user)
    assert "_loader." not in inspect.getsource(user)


def test_the_server_process_runs_no_pydantic_plugin(tmp_path):
    import subprocess
    import sys

    probe = (
        "import sys; from server import startup; startup.no_pydantic_plugins();"
        "from protocol import Settings; Settings();"
        "print('importlib.metadata' in sys.modules, list(sys.modules['pydantic.plugin._loader'].get_plugins()))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert out.stdout.split() == ["False", "[]"]


def test_every_request_of_the_contract_has_a_handler():
    """Every request of protocol.REQUESTS has a handler."""
    from protocol import REQUESTS, names

    not_yet: set[str] = set()
    assert set(REQUESTS) - set(ModusServer().protocol.fm.features) == not_yet


# ---------------------------------------------------------------- faults and flawed messages (issue 19)


def served() -> tuple[ModusServer, Sink]:
    server = ModusServer()
    sink = Sink()
    server.protocol.set_writer(sink)
    dispatch(server.protocol, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "capabilities": {}}})
    return server, sink


async def test_an_internal_fault_is_answered_in_one_line_and_its_traceback_goes_to_the_log(caplog):
    server, sink = served()

    @server.feature("test/plain")
    def plain(params):
        raise ValueError("boom\nand a second line")

    @server.feature("test/coroutine")
    async def coroutine(params):
        raise KeyError("gone")

    @server.feature("test/generator")
    def generator(params):
        yield from ()
        raise RuntimeError("mid-way")

    for n, method in enumerate(["test/plain", "test/coroutine", "test/generator"], start=1):
        dispatch(server.protocol, {"jsonrpc": "2.0", "id": n, "method": method, "params": {}})
    for _ in range(5):
        await asyncio.sleep(0)
    errors = {m["id"]: m["error"] for m in sink.messages if m.get("id") in (1, 2, 3)}
    assert errors == {
        1: {"code": -32603, "message": "ValueError: boom"},
        2: {"code": -32603, "message": "KeyError: 'gone'"},
        3: {"code": -32603, "message": "RuntimeError: mid-way"},
    }
    assert "traceback" not in json.dumps(sink.messages).lower()
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert all(f"raise {e}" in logged or f'raise {e}("' in logged for e in ("ValueError", "KeyError", "RuntimeError"))


async def test_a_failing_notification_handler_tells_the_user_one_line_and_logs_its_traceback(caplog):
    server, sink = served()

    @server.feature("test/told")
    def told(params):
        raise ValueError("boom")

    dispatch(server.protocol, {"jsonrpc": "2.0", "method": "test/told", "params": {}})
    await asyncio.sleep(0)
    [shown] = [m["params"]["message"] for m in sink.messages if m.get("method") == "window/showMessage"]
    assert shown == "Error in server: ValueError: boom"
    assert any('raise ValueError("boom")' in r.getMessage() for r in caplog.records if r.name == "server.lsp.server")


async def test_a_response_nested_too_deeply_fails_the_request_it_answers():
    from pygls.exceptions import JsonRpcException

    from server.lsp.transport import decode

    server, sink = served()
    asked = server.protocol.send_request_async("test/ask", {})
    [request] = [m for m in sink.messages if m.get("method") == "test/ask"]
    dispatch(server.protocol, decode(b'{"jsonrpc":"2.0","id":"%s","result":%s}' % (request["id"].encode(), b"[" * 200 + b"]" * 200)))
    try:
        await asyncio.wait_for(asked, 5)
    except JsonRpcException as exc:
        assert (exc.code, exc.message) == (-32700, f"Parse error in the answer to {request['id']}: nested deeper than 128 levels")
    else:
        raise AssertionError("the request should have failed")
    assert "error" not in sink.messages[-1]  # nothing is sent back for it


async def test_a_response_with_a_lone_surrogate_is_taken_with_u_fffd_in_its_place():
    from server.lsp.transport import decode

    server, sink = served()
    asked = server.protocol.send_request_async("test/ask", {})
    [request] = [m for m in sink.messages if m.get("method") == "test/ask"]
    dispatch(server.protocol, decode(b'{"jsonrpc":"2.0","id":"%s","result":{"feedback":"no\\udc00"}}' % request["id"].encode()))
    assert await asyncio.wait_for(asked, 5) == {"feedback": "no\ufffd"}


def test_a_log_line_with_a_lone_surrogate_is_written_not_lost(tmp_path):
    """stderr (the log of both servers) writes a lone surrogate as `\\ud800`: the line is kept,
    and no `--- Logging error ---` takes its place."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # this tree's server
    for module in ("server.lsp.run", "server.acp.run"):
        probe = (f"import logging; from {module} import configure_logging; configure_logging('info');"
                 "logging.getLogger('server.test').warning('a lone %s in a log line', '\\ud800')")
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, cwd=tmp_path, env=env, check=True)
        assert out.stderr.decode().endswith("WARNING server.test: a lone \\ud800 in a log line\n"), out.stderr


def test_an_error_told_to_a_client_that_has_gone_is_not_told_again_and_again():
    """Telling the client of an error fails when its pipe is closed; pygls reports that failure as
    another error, to the same client: without a stop, a traceback a level until Python's limit."""
    from pygls.exceptions import JsonRpcInternalError

    server = ModusServer()
    writes = []

    class Closed:
        def write(self, data):
            writes.append(data)
            raise ValueError("I/O operation on closed file")

    server.protocol.set_writer(Closed())
    server.report_server_error(RuntimeError("first"), JsonRpcInternalError)
    assert len(writes) == 1  # the one message tried, its failure logged, nothing more
