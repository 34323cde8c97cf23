"""The browser of `browser_action`: a headless Chromium per conversation, driven through
Playwright (driver.py), where it may go (policy.py), and which conversation has which
(registry.py). Importing this package loads neither Playwright nor Chromium: the first launch does."""

from __future__ import annotations

from .driver import Browser, BrowserError, Snapshot
from .registry import Browsers

__all__ = ["Browser", "BrowserError", "Browsers", "Snapshot"]
