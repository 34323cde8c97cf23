"""A test editor: the real server as a subprocess over stdio, driven with pytest-lsp's client.

It answers approvals and applies workspace edits the way an editor does, and records every
update the server sends, every `$/cancelRequest` it sends and every line it writes to stderr.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from protocol import methods
from server.demo import apply_to_disk
from server.lsp.server import converter


class Editor:
    def __init__(self, workspace: Path, config_home: Path):
        self.workspace = workspace
        self.config_home = config_home
        self.client = LanguageClient(converter_factory=converter)
        register_lsp_features(self.client)
        self.updates: list[dict[str, Any]] = []
        self.approvals: list[dict[str, Any]] = []
        self.approval_ids: list[Any] = []  # the JSON-RPC ids of those requests
        self.message_requests: list[lsp.ShowMessageRequestParams] = []
        self.edits: list[lsp.ApplyWorkspaceEditParams] = []
        #: The ids of our handlers of its requests that the server withdrew with `$/cancelRequest`.
        self.cancelled_requests: list[Any] = []
        #: Whether such a handler is cancelled then (pygls answers it with RequestCancelled at once);
        #: if not, it answers whenever it answers, like an editor that is slow to notice.
        self.obey_cancel = True
        self.stderr: list[str] = []
        #: Answers an approval: a dict, or an awaitable of one (an answer that never comes, say).
        self.decide: Callable[[dict], Any] = lambda request: {"decision": "approve"}
        self.apply_edits = True
        #: Answers `modus/client/diagnostics` (an editor declaring `experimental.modus.diagnostics`):
        #: the problems of a file by its uri, or an awaitable of them; it may raise (an error answer).
        self.problems: Callable[[str], Any] = lambda uri: []
        self.problem_requests: list[list[str]] = []
        self._changed = asyncio.Event()
        c = self.client
        c.feature(methods.UPDATE)(lambda params: self._record(params))

        async def approval(params):
            return await self._approval(params)

        c.feature(methods.APPROVAL)(approval)

        async def diagnostics(params):
            uris = list(params["uris"] if isinstance(params, dict) else params.uris)
            self.problem_requests.append(uris)
            items = []
            for uri in uris:
                found = self.problems(uri)
                items.append({"uri": uri, "diagnostics": await found if inspect.isawaitable(found) else found})
            return {"items": items}

        c.feature(methods.CLIENT_DIAGNOSTICS)(diagnostics)
        c.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(lambda params: self._message_request(params))
        c.feature(lsp.WORKSPACE_APPLY_EDIT)(lambda params: self._apply_edit(params))
        cancel = c.protocol._handle_cancel_notification  # pygls handles $/cancelRequest itself

        def on_cancel_request(msg_id: Any) -> None:
            self.cancelled_requests.append(msg_id)
            self._changed.set()
            if self.obey_cancel:
                cancel(msg_id)

        c.protocol._handle_cancel_notification = on_cancel_request

    async def start(self, settings: dict | None = None, profile: str = "visual-studio-code", approvals: bool = True,
                    capabilities: lsp.ClientCapabilities | None = None, problems: bool = False) -> lsp.InitializeResult:
        env = {**os.environ, "XDG_CONFIG_HOME": str(self.config_home)}
        await self.client.start_io(sys.executable, "-m", "server", env=env)
        # pytest-lsp's forwarding of the server's stderr has not started yet: ours replaces it
        self.client._stderr_forwarder.cancel()
        self.client._stderr_forwarder = asyncio.create_task(self._read_stderr(self.client._server.stderr))
        caps = capabilities or client_capabilities(profile)
        if approvals or problems:
            caps.experimental = {"modus": {"approvals": approvals, **({"diagnostics": True} if problems else {})}}
        return await self.client.initialize_session(
            lsp.InitializeParams(
                capabilities=caps,
                root_uri=self.workspace.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=self.workspace.as_uri(), name="ws")],
                initialization_options={"modus": {"modeSwitchDelayMs": 0, **(settings or {})}},
            )
        )

    async def stop(self) -> None:
        """Shut the server down; once it has exited, `stderr` holds all it wrote."""
        await self.client.shutdown_session()
        reading = self.client._stderr_forwarder
        if reading is not None:
            await asyncio.wait({reading}, timeout=10)  # to the end of the stream
        await self.client.stop()

    async def kill(self) -> None:
        """The server dies at once (SIGKILL): nothing of it gets to run, no shutdown."""
        process = self.client._server
        assert process is not None
        for pending in list(self.client.protocol._request_futures.values()):
            if isinstance(pending, asyncio.Task):  # our handlers of its requests (an approval waiting)
                pending.cancel()
        process.kill()
        await process.wait()
        await self.client.stop()

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.client.protocol.send_request_async(method, {} if params is None else params)

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.request(lsp.WORKSPACE_EXECUTE_COMMAND, lsp.ExecuteCommandParams(command=name, arguments=list(arguments)))

    # ------------------------------------------------------------ what the server sends

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        """Kept line by line, and passed on to the test's stderr as pytest-lsp does."""
        while line := await stream.readline():
            self.stderr.append(line.decode(errors="replace"))
            sys.stderr.buffer.write(line)

    def _record(self, update: dict) -> None:
        self.updates.append(update)
        self._changed.set()

    async def _approval(self, request: dict) -> dict:
        self.approvals.append(request)
        self.approval_ids.append(self.client.protocol.msg_id)
        answer = self.decide(request)
        return await answer if inspect.isawaitable(answer) else answer

    def _message_request(self, params: lsp.ShowMessageRequestParams):
        self.message_requests.append(params)
        answer = self.decide({"kind": "message", "title": params.message})
        title = "Approve" if answer["decision"] == "approve" else "Deny"
        return next(a for a in params.actions if a.title == title)

    def _apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if not self.apply_edits:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="the user closed the diff")
        apply_to_disk(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    # ------------------------------------------------------------ waiting and reading

    def of_kind(self, kind: str) -> list[dict]:
        return [u for u in self.updates if u["kind"] == kind]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 15) -> Any:
        async with asyncio.timeout(timeout):
            while not (found := predicate()):
                self._changed.clear()
                try:
                    await asyncio.wait_for(self._changed.wait(), 0.05)
                except TimeoutError:
                    pass
        return found

    async def chat(self, text: str, **params: Any) -> dict:
        """Send a message, wait for its turn to end; returns the turn_ended update."""
        before = len(self.of_kind("turn_ended"))
        await self.request(methods.CHAT_SEND, {"text": text, **params})
        await self.wait_for(lambda: len(self.of_kind("turn_ended")) > before)
        return self.of_kind("turn_ended")[-1]
