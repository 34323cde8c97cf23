"""Tools the agent can call, and the one gate every call passes (gate.py)."""

from __future__ import annotations

from ..prompt import params_schema
from . import browser, command, edits, files, flow, handoffs, mcp, plan, skills, todos
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from .gate import STAGES, ToolResult, run_tool

TOOLS: dict[str, ToolSpec] = {spec.name: spec for module in (files, skills, edits, command, flow, browser, mcp, handoffs, plan, todos) for spec in module.TOOLS}


def warm() -> None:
    """Every tool's parameter schema built, as the first model request would (loaded ahead)."""
    for spec in TOOLS.values():
        params_schema(spec.params)


def specs(names: frozenset[str]) -> list[ToolSpec]:
    """The tools of these names, in the registry's order."""
    return [spec for name, spec in TOOLS.items() if name in names]


__all__ = ["STAGES", "TOOLS", "specs", "Outcome", "Params", "Prepared", "ToolContext", "ToolResult", "ToolSpec", "run_tool"]
