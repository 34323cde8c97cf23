"""Tool calls written in the model's text, Roo/Cline style: `<tool><param>value</param></tool>`.

`XmlCallParser` is fed the text as it streams: it hands back what the user should see (the text
outside tool blocks) and collects the calls. Text and native tool calls end up as the same
`ToolCallRequest` objects.

A parameter's value ends at the first `</param>` that is followed by the next parameter's
opening tag or by the end of the block, so file contents that themselves contain `</content>`
survive. For the verbatim parameters (file contents, diffs) it is the last such `</param>`, as
Roo does for write_to_file's content: a file may hold `</content><item>` itself.
"""

from __future__ import annotations

import re
from typing import Callable, Collection

from .base import ToolCallRequest

_OPEN_TAG = re.compile(r"<([A-Za-z_][\w-]*)>")
_TAG_NAME_PREFIX = re.compile(r"<[A-Za-z_][\w-]*\Z|<\Z")
_AFTER_VALUE = re.compile(r"\s*(?:<[A-Za-z_][\w-]*>|\Z)")

#: Values kept verbatim but for one leading and one trailing newline (indentation matters).
VERBATIM = frozenset({"content", "diff", "search", "replace"})


def parse_params(block: str) -> dict[str, str]:
    """The `<name>value</name>` pairs of a tool block (the text between its tags)."""
    params: dict[str, str] = {}
    pos = 0
    while (m := _OPEN_TAG.search(block, pos)) is not None:
        name, start = m.group(1), m.end()
        close = f"</{name}>"
        end = -1
        k = start
        while (k := block.find(close, k)) != -1:
            if _AFTER_VALUE.match(block, k + len(close)):
                end = k
                if name not in VERBATIM:
                    break
            k += 1
        if end == -1:
            end = block.rfind(close, start)
        if end == -1:  # unclosed (a reply cut short): keep what arrived
            params[name] = _clean(name, block[start:])
            break
        params[name] = _clean(name, block[start:end])
        pos = end + len(close)
    return params


def _clean(name: str, value: str) -> str:
    if name in VERBATIM:
        value = value.removeprefix("\r\n").removeprefix("\n")
        return value.removesuffix("\n").removesuffix("\r")
    return value.strip()


class XmlCallParser:
    """Splits streamed text into visible text and tool calls."""

    def __init__(self, tool_names: Collection[str], new_id: Callable[[], str]):
        self._names = frozenset(tool_names)
        self._new_id = new_id
        self._buf = ""
        self._tool: str | None = None
        self._search_from = 0
        self.calls: list[ToolCallRequest] = []

    def feed(self, chunk: str) -> str:
        """Add streamed text; returns the part that is safe to show now."""
        self._buf += chunk
        visible: list[str] = []
        while self._buf:
            if self._tool is None:
                i = self._buf.find("<")
                if i == -1:
                    visible.append(self._buf)
                    self._buf = ""
                    break
                visible.append(self._buf[:i])
                self._buf = self._buf[i:]
                m = _OPEN_TAG.match(self._buf)
                if m and m.group(1) in self._names:
                    self._tool = m.group(1)
                    self._buf = self._buf[m.end() :]
                    self._search_from = 0
                    continue
                if not m and _TAG_NAME_PREFIX.match(self._buf) and self._could_open(self._buf[1:]):
                    break  # maybe the start of a tool tag: wait for more text
                visible.append("<")
                self._buf = self._buf[1:]
            else:
                close = f"</{self._tool}>"
                j = self._buf.find(close, self._search_from)
                if j == -1:
                    self._search_from = max(0, len(self._buf) - len(close) + 1)
                    break
                self._emit(self._buf[:j])
                self._buf = self._buf[j + len(close) :]
        return "".join(visible)

    def finish(self) -> str:
        """End of the reply: returns the held-back text; an unclosed tool block still counts as a call."""
        rest, self._buf = self._buf, ""
        if self._tool is not None:
            self._emit(rest)
            return ""
        return rest

    def _could_open(self, partial: str) -> bool:
        return any(name.startswith(partial) for name in self._names)

    def _emit(self, block: str) -> None:
        assert self._tool is not None
        self.calls.append(ToolCallRequest(self._new_id(), self._tool, dict(parse_params(block))))
        self._tool = None
        self._search_from = 0
