"""Typed refusals. A tool failure's message is exactly what the model and the user see; a
BadRequest is a client request the LSP layer answers with -32602."""

from __future__ import annotations


class ToolFailure(Exception):
    """A tool call that did not succeed; `type` goes on the wire as `error.type`."""

    @property
    def type(self) -> str:
        return type(self).__name__

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.type


class UnknownTool(ToolFailure):
    pass


class InvalidParams(ToolFailure):
    pass


class ToolNotAllowed(ToolFailure):
    pass


class PlanModeBlocked(ToolFailure):
    pass


class HookBlocked(ToolFailure):
    """A PreToolUse hook blocked the call; the message is its words."""


class FileRestrictionError(ToolFailure):
    pass


class OutsideWorkspace(ToolFailure):
    pass


class ProtectedPath(ToolFailure):
    """An edit of what decides what runs behind the user's back: Modus's own state, a git
    repository's internals."""


class HostNotAllowed(ToolFailure):
    """The browser may not go there: not loopback, and no glob of browser.allowedHosts matches."""


class Denied(ToolFailure):
    """The user said no. Not a mistake of the model."""


class EditFailed(ToolFailure):
    """The editor declined or failed to apply a workspace edit."""


class ToolError(ToolFailure):
    """The tool ran and failed (file not found, no match, command could not start...)."""


def denied(feedback: str | None = None) -> Denied:
    text = "The user denied this operation."
    if feedback and feedback.strip():
        text += f"\n<feedback>\n{feedback.strip()}\n</feedback>"
    return Denied(text)


class BadRequest(ValueError):
    """A client's request names something that does not exist or is not allowed (answered -32602)."""


class RequestFailed(Exception):
    """The request was right, but what it asks for cannot be done now (a team space offline):
    answered with LSP's RequestFailed (-32803), the message saying why."""


class TurnBusy(Exception):
    """A team space's agent already runs a turn in the conversation, on another server: one turn
    per agent per conversation across the space (the store's start_turn refuses a second)."""
