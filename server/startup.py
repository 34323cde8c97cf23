"""What start-up does for its own speed and memory (measured in bench/run.py): called by the
command line before the server's modules load, and by the server once its session runs."""

from __future__ import annotations

import gc
import sys
import types


#: While the server starts, the cyclic garbage collector runs less often: start-up makes a great
#: many objects that all live for good (classes, modules), and collecting young garbage every
#: 700 allocations costs more than the little it finds. (Switching it off would keep that
#: garbage, several MB, for good.)
START_GC = (5000, 50, 1000)
DEFAULT_GC = gc.get_threshold()


def lean_start() -> None:
    """The garbage collector waits while the server starts (START_GC); and pydantic runs no
    plugin here (see no_pydantic_plugins)."""
    gc.set_threshold(*START_GC)
    no_pydantic_plugins()


def no_pydantic_plugins() -> None:
    """No pydantic plugin (an observability hook, say) runs in a process that holds the user's
    keys and code. pydantic looks for plugins with its first validator, through a module that
    imports importlib.metadata (email, zipfile, csv...: 12 ms and 2.5 MB at start-up) even when
    PYDANTIC_DISABLE_PLUGINS switches them off: that module is given here as one that finds none.
    (tests/test_lsp_protocol.py checks that pydantic's own module still looks like this one.)"""
    loader = types.ModuleType("pydantic.plugin._loader", "Modus: no pydantic plugins in this process.")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules.setdefault(loader.__name__, loader)


def started() -> None:
    """The end of start-up (the session runs): what exists now lives for good (gc.freeze), and
    the garbage collector goes back to its usual pace."""
    gc.freeze()
    gc.set_threshold(*DEFAULT_GC)
