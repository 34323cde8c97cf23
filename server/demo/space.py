"""`modus demo --space`: a team space on a PostgreSQL the demo starts and removes itself.

Two members, Alice and Bob, each with a Modus server of their own (each its own checkout), attach
to one space. Alice @-mentions Bob: only Bob's editor is told. Bob asks the agent for a file: the
turn runs on Bob's server and writes Bob's checkout, and Alice's editor sees the same turn, update
by update, in the same order with the same numbers. Bob leaves: Alice sees him offline. Needs
PostgreSQL's server programs (initdb, pg_ctl); nothing else, and nothing is left behind.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from protocol import methods

from ..lsp.server import converter
from ..state.pg import cluster
from . import apply_to_disk, note, say, verdict

SCRIPT = """turns:
  - text: "Here is the greeting, in your checkout."
    toolCalls:
      - name: write_to_file
        arguments:
          path: hello.py
          content: "print('Hello from the team space!')\\n"
  - text: "Written: hello.py prints the greeting."
"""
MENTION = "@bob could you add a hello.py? The agent can write it on your side."
ASK = "@modus write hello.py that prints a greeting"


class Member:
    """One member's editor: records the updates, approves, applies edits to its own checkout."""

    def __init__(self, handle: str, workspace: Path):
        self.handle = handle
        self.workspace = workspace
        self.updates: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.client = LanguageClient(f"modus-demo-{handle}", "1", converter_factory=converter)
        handlers = {  # pygls takes functions, not bound methods
            methods.UPDATE: lambda params: self._update(params),
            methods.APPROVAL: lambda params: {"decision": "approve"},
            lsp.WORKSPACE_APPLY_EDIT: lambda params: self._apply(params),
            lsp.WINDOW_LOG_MESSAGE: lambda params: None,
            lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: lambda params: None,
            lsp.WINDOW_SHOW_MESSAGE: lambda params: None,
        }
        for method, handler in handlers.items():
            self.client.feature(method)(handler)

    def _update(self, update: dict[str, Any]) -> None:
        self.updates.append(update)
        self.changed.set()

    def _apply(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        apply_to_disk(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    async def start(self, space: dict[str, Any], state: Path) -> None:
        env = {**os.environ, "XDG_STATE_HOME": str(state / self.handle), "XDG_CONFIG_HOME": str(state / f"{self.handle}-config")}
        await self.client.start_io(sys.executable, "-m", "server", cwd=str(self.workspace), env=env)
        caps = lsp.ClientCapabilities(
            workspace=lsp.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True, resource_operations=[lsp.ResourceOperationKind.Create]),
            ),
            experimental={"modus": {"approvals": True}},
        )
        options = {"space": space, "models": {"default": {"provider": "scripted", "script": "script.yaml"}}, "autoApprove": {"edit": True}}
        await self.client.initialize_async(
            lsp.InitializeParams(capabilities=caps, root_uri=self.workspace.as_uri(), initialization_options={"modus": options})
        )
        self.client.initialized(lsp.InitializedParams())

    async def request(self, method: str, params: Any) -> Any:
        return await self.client.protocol.send_request_async(method, params)

    async def until(self, found, timeout: float = 30) -> Any:
        async with asyncio.timeout(timeout):
            while not (result := found()):
                self.changed.clear()
                await self.changed.wait()
            return result

    def of(self, kind: str, cid: str | None = None) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["kind"] == kind and (cid is None or u.get("conversationId") == cid)]

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def run(root: Path, url: str) -> int:
    alice, bob = Member("alice", root / "alice"), Member("bob", root / "bob")
    for member in (alice, bob):
        member.workspace.mkdir()
    (bob.workspace / "script.yaml").write_text(SCRIPT)
    space = {"url": url, "name": "team"}
    await alice.start({**space, "member": "alice", "displayName": "Alice"}, root)
    await bob.start({**space, "member": "bob", "displayName": "Bob"}, root)
    ok = True
    try:
        for member in (alice, bob):
            await member.until(lambda m=member: [u for u in m.of("space_changed") if u["space"]["state"] == "connected"])
        listed = await alice.request(methods.SPACE_MEMBERS, {})
        note("👥", "members: " + ", ".join(f"{m.get('displayName') or m['handle']} ({'online' if m['online'] else 'offline'})" for m in listed["members"]))

        print()
        say("alice", MENTION)
        sent = await alice.request(methods.CHAT_SEND, {"text": MENTION, "conversationId": "conv-demo-team"})
        [told] = await bob.until(lambda: bob.of("notification"))
        note("🔔", f"Bob's editor: {told['from']} mentioned you: {told['text']}  (Alice's editor: no notification; no agent woken: {sent['dispatched']})")
        ok &= not alice.of("notification") and sent["dispatched"] == []

        print()
        say("bob", ASK + "   (the agent runs on Bob's server, in Bob's checkout)")
        await bob.request(methods.CHAT_SEND, {"text": ASK, "conversationId": "conv-demo-team"})
        await alice.until(lambda: alice.of("turn_ended", "conv-demo-team"))
        await bob.until(lambda: bob.of("turn_ended", "conv-demo-team"))
        for u in sorted(alice.of("message", "conv-demo-team") + alice.of("tool_call", "conv-demo-team"), key=lambda u: u.get("seq", 0)):
            if u["kind"] == "message" and u["role"] == "user":
                note("✉", f"#{u['seq']} Alice's editor shows {u.get('member', '?')}'s message: {u['text']}")
            elif u["kind"] == "message":
                note("✉", f"#{u['seq']} Alice's editor shows {u.get('agent')}: {u['text']}")
            elif u["status"] == "completed":
                note("✓", f"#{u['seq']} Alice's editor shows {u['name']}: {u.get('result', '')}")
        seen = [(u["seq"], u["kind"]) for u in alice.updates if u.get("conversationId") == "conv-demo-team" and "seq" in u]
        same = seen == [(u["seq"], u["kind"]) for u in bob.updates if u.get("conversationId") == "conv-demo-team" and "seq" in u]
        gapless = [seq for seq, _ in seen] == list(range(1, len(seen) + 1))
        note("≡", f"both editors saw the same {len(seen)} updates in one order, numbered 1–{len(seen)}: {'yes' if same and gapless else 'NO'}")
        written = (bob.workspace / "hello.py").exists() and not (alice.workspace / "hello.py").exists()
        note("📁", f"hello.py written in Bob's checkout only: {'yes' if written else 'NO'}")
        ok &= same and gapless and written

        print()
        say("bob", "(closes his editor)")
        await bob.stop()
        listed = await alice.request(methods.SPACE_MEMBERS, {})
        note("👥", "members: " + ", ".join(f"{m.get('displayName') or m['handle']} ({'online' if m['online'] else 'offline'})" for m in listed["members"]))
        ok &= [m["online"] for m in listed["members"] if m["handle"] == "bob"] == [False]
    finally:
        await alice.stop()
    return verdict(ok)


def main() -> int:
    print("Modus demo: a team space on a throwaway PostgreSQL, two members and an agent.\n")
    if cluster.binaries() is None:
        print("This demo needs PostgreSQL's server programs (initdb, pg_ctl): on Debian and Ubuntu, `apt install postgresql`.")
        return 2
    folder = Path(tempfile.mkdtemp(prefix="modus-demo-pg-"))
    try:
        started = time.monotonic()
        url = cluster.start(folder, os.urandom(12).hex())
        print(f"postgres ▸ a throwaway cluster on 127.0.0.1:{url.rsplit(':', 1)[1].split('/')[0]}, started in {time.monotonic() - started:.1f} s\n")
        with tempfile.TemporaryDirectory(prefix="modus-demo-space-") as root:
            return asyncio.run(run(Path(root), url))
    finally:
        cluster.stop(folder)
        print("postgres ▸ stopped and removed")
