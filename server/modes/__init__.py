"""Modes: personas with tool groups and file rules (SPEC §1)."""

from .loader import Diagnostic, parse_modes
from .model import ALWAYS_AVAILABLE, BUILTIN_MODES, DEFAULT_MODE, GROUP_TOOLS, Group, Mode
from .patterns import Pattern, PatternError
from .registry import ModeRegistry, global_modes_path

__all__ = [
    "ALWAYS_AVAILABLE",
    "BUILTIN_MODES",
    "DEFAULT_MODE",
    "GROUP_TOOLS",
    "Diagnostic",
    "Group",
    "Mode",
    "ModeRegistry",
    "Pattern",
    "PatternError",
    "global_modes_path",
    "parse_modes",
]
