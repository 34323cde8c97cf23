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
