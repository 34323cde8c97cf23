"""Local stand-ins for the Anthropic and OpenAI HTTP APIs, so the providers are tested through the
official SDKs, over real HTTP, without the network.

Each fake is an HTTP server on 127.0.0.1 (a free port, a thread of the test process). It answers
every request with the next item of its queue — a `Reply` streamed in the API's own SSE format, a
`Failure` as the API's error JSON, `Raw` bytes, or a `Stall` — and records every request. Streams
are sent in chunked transfer encoding, as the real APIs do, so that one can be cut in the middle.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Literal

PIECE = 4  # characters per streamed delta: every text of more than 4 characters comes in pieces


@dataclass
class Call:
    id: str
    name: str
    #: A string is sent as is: broken JSON.
    arguments: dict[str, Any] | str = field(default_factory=dict)


@dataclass
class Reply:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    #: Streamed as a thinking block (Anthropic) or `reasoning_content` deltas (OpenAI-compatible).
    thinking: str = ""
    #: Overrides the stop / finish reason ("max_tokens", "length").
    stop: str | None = None
    #: Send only the first `events` SSE events (all when None), then: "close" the stream properly
    #: (a server that stops early), "cut" the connection in the middle of the body, or "hang" until
    #: the server closes (a model that never finishes).
    events: int | None = None
    then: Literal["close", "cut", "hang"] = "close"
    #: Seconds between two events: a slow but steady model.
    gap: float = 0
    #: The tokens the API reports, in its own words: Anthropic's `input_tokens`, `output_tokens`,
    #: `cache_read_input_tokens`, `cache_creation_input_tokens`; OpenAI's `prompt_tokens`,
    #: `completion_tokens`, `cached_tokens` (sent in a last chunk without choices).
    usage: dict[str, int] | None = None


@dataclass
class Stall:
    """Read the request, then send nothing at all until the server closes: a server that never answers."""


@dataclass
class Failure:
    status: int
    message: str
    type: str = "api_error"
    #: The `retry-after` header (seconds, or an HTTP date), left out when None. 0 by default: a
    #: retry may come at once, the tests stay fast.
    retry_after: int | str | None = 0
    #: The `retry-after-ms` header, left out when None (both APIs may send it beside `retry-after`).
    retry_after_ms: int | None = None


@dataclass
class Raw:
    body: str


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]  # {} when the fake keeps no bodies (see FakeServer.keep)
    #: time.perf_counter() when its request line had come, and when the fake had sent its answer
    #: (for a benchmark: what the client did in between two requests is the client's own time)
    received: float = 0.0
    answered: float = 0.0
    size: int = 0  # of the body, in bytes


def _pieces(text: str) -> list[str]:
    return [text[i : i + PIECE] for i in range(0, len(text), PIECE)]


def _arguments(call: Call) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


class _Handler(BaseHTTPRequestHandler):
    server: "_HTTPServer"
    protocol_version = "HTTP/1.1"  # for the chunked transfer encoding

    def do_GET(self) -> None:
        """`GET …/models`: the models the fake lists (`fake.models`), or 401 when its key is not the one sent."""
        fake = self.server.fake
        fake.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, {}, time.perf_counter()))
        sent = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").removeprefix("Bearer ")
        status, body = (200, fake.listing()) if fake.key is None or sent == fake.key else (401, fake.error_body(Failure(401, "invalid x-api-key", "authentication_error")))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        received = time.perf_counter()
        fake = self.server.fake
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size)
        body = json.loads(raw or b"{}") if fake.keep(len(fake.requests)) else {}
        record = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body, received, size=size)
        fake.requests.append(record)
        try:
            self._answer(fake)
        finally:
            record.answered = time.perf_counter()

    def _answer(self, fake: "FakeServer") -> None:
        reply = fake.queue.popleft() if fake.queue else Failure(500, "The fake server has no reply left.")
        if isinstance(reply, Stall):
            fake.closing.wait(30)
            self.close_connection = True
            return
        if isinstance(reply, Failure):
            body = json.dumps(fake.error_body(reply)).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            for name, value in (("retry-after", reply.retry_after), ("retry-after-ms", reply.retry_after_ms)):
                if value is not None:
                    self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(body)
            return
        frames = [reply.body] if isinstance(reply, Raw) else fake.frames(reply)[: reply.events]
        reply = reply if isinstance(reply, Reply) else Reply()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for frame in frames:
            time.sleep(reply.gap)
            data = frame.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if reply.then == "hang":
            fake.closing.wait(30)
        elif reply.then == "close":
            self.wfile.write(b"0\r\n\r\n")
        # "cut": the connection closes without the chunk that ends the body

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: "FakeServer"


class FakeServer:
    provider: str

    def __init__(self, keep: Callable[[int], bool] = lambda n: True) -> None:
        #: whether to keep the body of request number n (from 0): a benchmark of 500 requests of a
        #: growing conversation keeps a few
        self.keep = keep
        self.queue: deque[Reply | Failure | Raw | Stall] = deque()
        #: what `GET …/models` lists; `key`: the API key it takes (None: any)
        self.models = ["fake-model"]
        self.key: str | None = None
        self.requests: list[Recorded] = []
        self.closing = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self.port = self._httpd.server_address[1]

    def add(self, *replies: Reply | Failure | Raw | Stall) -> "FakeServer":
        self.queue.extend(replies)
        return self

    def __enter__(self) -> "FakeServer":
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening (again is fine): the port then refuses connections."""
        self.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def frames(self, reply: Reply) -> list[str]:
        raise NotImplementedError

    def error_body(self, failure: Failure) -> dict[str, Any]:
        raise NotImplementedError

    def listing(self) -> dict[str, Any]:
        raise NotImplementedError


class FakeAnthropic(FakeServer):
    """POST /v1/messages, streamed as Messages API events."""

    provider = "anthropic"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_body(self, failure: Failure) -> dict[str, Any]:
        return {"type": "error", "error": {"type": failure.type, "message": failure.message}}

    def listing(self) -> dict[str, Any]:
        data = [{"id": m, "type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in self.models]
        return {"data": data, "has_more": False, "first_id": self.models[0] if self.models else None, "last_id": self.models[-1] if self.models else None}

    def frames(self, reply: Reply) -> list[str]:
        def event(name: str, **data: Any) -> str:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[str]:
            index = len(blocks)
            blocks.append(start)
            return [
                event("content_block_start", index=index, content_block=start),
                *(event("content_block_delta", index=index, delta=d) for d in deltas),
                event("content_block_stop", index=index),
            ]

        blocks: list[dict[str, Any]] = []
        message = {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if reply.usage:
            message["usage"] = {k: v for k, v in reply.usage.items() if k != "output_tokens"} | {"output_tokens": 1}
        out = [event("message_start", message=message)]
        if reply.thinking:
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(reply.thinking)]
            signature = {"type": "signature_delta", "signature": f"sig-{len(self.requests)}"}
            out += block({"type": "thinking", "thinking": "", "signature": ""}, [*deltas, signature])
        if reply.text:
            out += block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(reply.text)])
        for call in reply.calls:
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(_arguments(call))]
            out += block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas)
        stop = reply.stop or ("tool_use" if reply.calls else "end_turn")
        output = (reply.usage or {}).get("output_tokens", 5)
        out.append(event("message_delta", delta={"stop_reason": stop, "stop_sequence": None}, usage={"output_tokens": output}))
        out.append(event("message_stop"))
        return out


class FakeOpenAI(FakeServer):
    """POST /v1/chat/completions, streamed as chat.completion.chunk events ending with [DONE]."""

    provider = "openai"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def error_body(self, failure: Failure) -> dict[str, Any]:
        return {"error": {"message": failure.message, "type": failure.type, "param": None, "code": None}}

    def listing(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]}

    def frames(self, reply: Reply) -> list[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            data = {
                "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(data)}\n\n"

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({"reasoning_content": p}) for p in _pieces(reply.thinking)]
        out += [chunk({"content": p}) for p in _pieces(reply.text)]
        for index, call in enumerate(reply.calls):
            first = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            out.append(chunk({"tool_calls": [first]}))
            for piece in _pieces(_arguments(call)):
                out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        out.append(chunk({}, reply.stop or ("tool_calls" if reply.calls else "stop")))
        if reply.usage:
            u = reply.usage
            usage = {
                "prompt_tokens": u["prompt_tokens"], "completion_tokens": u["completion_tokens"],
                "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
                "prompt_tokens_details": {"cached_tokens": u.get("cached_tokens", 0)},
            }
            data = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [], "usage": usage}
            out.append(f"data: {json.dumps(data)}\n\n")
        out.append("data: [DONE]\n\n")
        return out
