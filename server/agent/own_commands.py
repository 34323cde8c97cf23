"""Modus's own slash commands, ahead of the prompt files' (prompt/commands.py): `/plan`, `/act`,
`/mode <slug>`, `/trust` and `/condense`, each followed by an optional message that is sent
once the command has run. Over LSP and ACP alike (`modus/chat/send`, `session/prompt`).

A command does what the palette's request of the same name does (the phase toggle, the mode
picker, "Trust Workspace Settings", "Condense"); what it has to tell besides the state it
changed is a system message (a note, not stored); what it cannot do is a BadRequest on `text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable

import protocol

from ..errors import BadRequest
from .configuration import Configuration
from .intake import Intake

if TYPE_CHECKING:
    from protocol import ChatSendParams, ChatSendResult


@dataclass(frozen=True)
class OwnCommand:
    name: str
    description: str
    argument_hint: str | None = None


OWN = (
    OwnCommand("plan", "Switch to PLAN: explore read-only and talk the plan through (a message may follow)", "what to plan (optional)"),
    OwnCommand("act", "Switch to ACT: carry out the plan or the task (a message may follow)", "what to do (optional)"),
    OwnCommand("mode", "Switch to another mode: /mode <slug> (a message may follow)", "mode slug, then an optional message"),
    OwnCommand("trust", "Trust this workspace's .modus/settings.json as it is now (what in it waits for trust: yolo, "
               "autoApprove, stateDir, hooks, model endpoints…)"),
    OwnCommand("condense", "Condense the conversation: the model summarises the older part, which the summary replaces in "
               "what it sees from now on (the history keeps it all)"),
)
NAMES = frozenset(c.name for c in OWN)

#: `/<name>` at the start of a message, then what follows it (the message sent after it).
TYPED = re.compile(r"/([\w-]+)(?:[ \t]+|\n|$)")


def parse(text: str) -> tuple[str, str] | None:
    """(the command, what follows it) when the message starts with one of Modus's commands; any
    other text (a prompt file's command, `/usr/bin is empty`) is not one."""
    match = TYPED.match(text)
    if match is None or match[1] not in NAMES:
        return None
    return match[1], text[match.end():].strip()


def check(text: str, modes) -> None:
    """What can be known of a command before it runs, checked (an edit checks before it cuts the
    conversation): `/mode` needs a slug of a mode that exists. BadRequest `text: /mode: …`."""
    typed = parse(text)
    if typed is None or typed[0] != "mode":
        return
    slug = typed[1].partition(" ")[0]
    if not slug:
        listed = ", ".join(f"`{m.slug}`" for m in modes.modes)
        raise BadRequest(f"text: /mode: /mode <slug>, where the slug is one of {listed}")
    if modes.get(slug) is None:
        raise BadRequest(f"text: /mode: Invalid mode: {slug}")


class OwnCommands:
    """Runs Modus's commands in front of the Intake: a message that starts with one runs it, and
    what follows goes on to the Intake as the message."""

    def __init__(self, config: Configuration, intake: Intake, condense: Callable[[str], Awaitable[protocol.CondenseResult]]):
        self.config = config
        self.intake = intake
        self.condense = condense

    async def send(self, params: ChatSendParams) -> ChatSendResult:
        """`modus/chat/send`: the command first, if the text starts with one; then the message."""
        typed = parse(params.text)
        if typed is None:
            return await self.intake.send(params)
        conversations = self.intake.conversations
        if params.conversation_id is not None:
            conversations.make_current(conversations.chosen(params.conversation_id), params.owner)
        name, rest = typed
        cid = conversations.current
        rest = await self.run(name, rest, cid)
        if rest or params.images:
            sent = await self.intake.send(params.model_copy(update={"text": rest, "conversation_id": cid}))
            return sent.model_copy(update={"command": name})
        return protocol.ChatSendResult(conversation_id=cid, message_id="", text="", dispatched=[], command=name)

    async def run(self, name: str, rest: str, cid: str) -> str:
        """Run the command `name` in the conversation `cid`; returns the message that follows it
        (what is left once `/mode` took its slug; may be empty). What it could not do: a
        BadRequest `text: /<name>: <why>`."""
        try:
            return await self._run(name, rest, cid)
        except BadRequest as exc:
            said = str(exc)
            raise BadRequest(said if said.startswith("text: ") else f"text: /{name}: {said}") from None

    async def _run(self, name: str, rest: str, cid: str) -> str:
        switcher = self.intake.switcher
        if name == "mode":
            check(f"/mode {rest}", self.config.modes)
            slug, _, rest = rest.partition(" ")
            switcher.switch_mode(slug, by="user", conversation_id=cid)
            rest = rest.strip()
            if not rest:
                self.note(cid, f"The mode is {self.config.modes.get(slug).name}.")
        elif name in ("plan", "act"):
            if switcher.phase == name:
                self.note(cid, f"The phase is {name.upper()} already.")
            elif rest or name == "plan":
                switcher.set_phase(name, by="user", conversation_id=cid)
            else:  # /act alone: a plan_mode_respond that waits for the user's answer goes on in ACT
                await self.intake.user_set_phase("act")
        elif name == "condense":
            await self.condense(cid)  # what it did (or why not) is a system message of its own
        else:  # trust
            trusted = self.config.trust_workspace_settings()
            self.note(cid, f"Trusted as it is now: {', '.join(trusted)}.")
        return rest

    def note(self, cid: str, text: str) -> None:
        self.config.host.publish(protocol.MessageUpdate(conversation_id=cid, role="system", text=text))


def listed() -> list[protocol.CommandInfo]:
    """Modus's commands as `modus/commands/list` gives them (first: their names win)."""
    return [protocol.CommandInfo(name=c.name, description=c.description, argument_hint=c.argument_hint, source="modus") for c in OWN]
