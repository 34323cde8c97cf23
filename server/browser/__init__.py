"""The browser of `browser_action`: a headless Chromium per conversation, driven through
Playwright (driver.py), where it may go (policy.py), and which conversation has which
(registry.py). Importing this package loads neither the driver, Playwright nor Chromium: the
first launch does (start-up stays fast)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .driver import Browser, BrowserError, Snapshot
    from .registry import Browsers

__all__ = ["Browser", "BrowserError", "Browsers", "Snapshot"]


def __getattr__(name: str) -> Any:
    if name in ("Browser", "BrowserError", "Snapshot"):
        from . import driver

        return getattr(driver, name)
    if name == "Browsers":
        from .registry import Browsers

        return Browsers
    raise AttributeError(name)
