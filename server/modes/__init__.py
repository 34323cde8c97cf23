"""Modes: personas with tool groups and file rules (SPEC §1)."""

from .model import ALWAYS_AVAILABLE, BUILTIN_MODES, DEFAULT_MODE, GROUP_TOOLS, HANDOFF_TOOLS, PHASE_ONLY, SKILL_TOOL, Diagnostic, Group, Mode
from .patterns import Pattern, PatternError
from .registry import ModeRegistry, global_modes_path



def __getattr__(name: str):
    if name == "parse_modes":  # YAML and pydantic checks: loaded when a modes file is read
        from .loader import parse_modes

        return parse_modes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALWAYS_AVAILABLE",
    "BUILTIN_MODES",
    "DEFAULT_MODE",
    "GROUP_TOOLS",
    "HANDOFF_TOOLS",
    "PHASE_ONLY",
    "SKILL_TOOL",
    "Diagnostic",
    "Group",
    "Mode",
    "ModeRegistry",
    "Pattern",
    "PatternError",
    "global_modes_path",
    "parse_modes",
]
