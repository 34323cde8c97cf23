"""One headless Chromium with one page, driven through Playwright's async API.

Nothing is downloaded: Playwright's own Chromium is used when it is installed, else the
system's (`$CHROMIUM_PATH`, default `/usr/bin/chromium`, Debian's package). Each browser gets a
fresh profile folder, removed when it closes, and Chromium's flags for a shared machine without
a display.

Where the page may go (policy.py) is held three ways: `launch` checks its URL before anything
starts; every request the page makes passes a route that aborts those to hosts not allowed; and
Chromium's own host resolver answers "not found" for every host but loopback and the allowed
globs (`--host-resolver-rules`), which holds what a route does not see: the hops of a redirect,
WebSockets, prefetches. A request refused either way is reported with the next action.

Every call is bounded (`timeout` seconds, 15 by default): a page that never loads or an action
that never ends fails with a BrowserError naming the action.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence
from urllib.parse import urlsplit

import anyio

from . import policy

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, ConsoleMessage, Page, Playwright, Request, Route

log = logging.getLogger(__name__)

#: Chromium's flags on this kind of machine (no display, no GPU, shared, offline by default).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-proxy-server",  # a proxy would resolve hosts itself, past the host resolver rules
)

#: Console lines kept between two actions, and the length of each.
MAX_CONSOLE_LINES = 50
MAX_LINE = 500
#: How long starting Chromium may take (a busy machine); the actions take `timeout`.
START_TIMEOUT = 30.0


class BrowserError(Exception):
    """What the model and the user are told when the browser could not do something."""


@dataclass(frozen=True)
class Snapshot:
    """What an action shows: the page's screenshot (PNG at the viewport's size), where it is, and
    what it said on its console since the last action."""

    png: bytes
    url: str
    title: str
    viewport: tuple[int, int]
    console: tuple[str, ...] = ()
    #: requests refused since the last action (host not allowed), as `url (why)`
    blocked: tuple[str, ...] = ()
    #: after a scroll: (the page's scroll position, its height), in pixels
    scrolled: tuple[int, int] | None = None


def chromium_path(bundled: str | None) -> str | None:
    """Which Chromium to start: None (Playwright's own, installed at `bundled`), else the system's."""
    if bundled and os.path.exists(bundled):
        return None
    system = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
    if os.access(system, os.X_OK):
        return system
    raise BrowserError(
        f"No Chromium to start: neither Playwright's ({bundled}) nor the system's ({system}). "
        "Install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH."
    )


def resolver_rules(allowed_hosts: Sequence[str]) -> str:
    """Chromium's `--host-resolver-rules`: every host not found, but loopback and the allowed globs."""
    kept = [glob.strip() for glob in allowed_hosts if policy.GLOB.fullmatch(glob.strip())]
    return ", ".join(["MAP * ~NOTFOUND", *(f"EXCLUDE {host}" for host in (*policy.LOOPBACK_NAMES, *kept))])


class Browser:
    """A headless Chromium showing one page. `start` it, act on it, `close` it."""

    def __init__(self, viewport: tuple[int, int], allowed_hosts: Sequence[str], timeout: float = 15.0):
        self.viewport = viewport
        self.allowed_hosts = tuple(allowed_hosts)
        self.timeout = timeout
        self._playwright: Playwright | None = None
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._profile: str | None = None
        self._console: list[str] = []
        self._dropped = 0
        self._blocked: list[str] = []
        self.closed = False

    @property
    def page(self) -> Page:
        if self._page is None or self.closed:
            raise BrowserError("The browser is closed.")
        return self._page

    # ------------------------------------------------------------ life

    async def start(self) -> None:
        try:
            from playwright.async_api import async_playwright
        except ImportError:
            raise BrowserError("The browser needs the Python package playwright (pip install playwright).") from None
        try:
            with anyio.fail_after(START_TIMEOUT):
                self._playwright = await async_playwright().start()
                executable = chromium_path(self._playwright.chromium.executable_path)
                self._profile = tempfile.mkdtemp(prefix="modus-browser-")
                width, height = self.viewport
                self._context = await self._playwright.chromium.launch_persistent_context(
                    self._profile,
                    executable_path=executable,
                    headless=True,
                    args=[*FLAGS, f"--host-resolver-rules={resolver_rules(self.allowed_hosts)}"],
                    viewport={"width": width, "height": height},
                    device_scale_factor=1,
                    timeout=START_TIMEOUT * 1000,
                    handle_sigint=False, handle_sigterm=False, handle_sighup=False,
                )
                self._context.set_default_timeout(self.timeout * 1000)
                self._context.set_default_navigation_timeout(self.timeout * 1000)
                await self._context.route("**/*", self._route)
                self._context.on("page", self._follow)
                self._context.on("request", self._watch)
                self._follow(self._context.pages[0] if self._context.pages else await self._context.new_page())
        except BrowserError:
            await self.close()
            raise
        except TimeoutError:
            await self.close()
            raise BrowserError(f"browser_action 'launch': Chromium did not start within {START_TIMEOUT:g} s.") from None
        except Exception as exc:
            await self.close()
            raise BrowserError(f"browser_action 'launch': Chromium did not start: {_first_line(exc)}") from None

    async def close(self) -> None:
        """Chromium and Playwright's driver stopped, the profile removed. Never raises; bounded."""
        if self.closed:
            return
        self.closed = True
        context, playwright, self._context, self._playwright, self._page = self._context, self._playwright, None, None, None
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            if context is not None:
                try:
                    await context.close()
                except Exception as exc:  # Chromium died already: the driver's stop below ends it
                    log.debug("closing the browser: %s", exc)
            if playwright is not None:
                try:
                    await playwright.stop()
                except Exception as exc:
                    log.debug("stopping playwright: %s", exc)
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)

    # ------------------------------------------------------------ actions

    async def goto(self, url: str) -> Snapshot:
        why = policy.refusal(url, self.allowed_hosts)
        if why is not None:
            raise BrowserError(why)

        async def go() -> None:
            try:
                await self.page.goto(url, wait_until="load")
            except Exception:
                if self._blocked:  # the page, or a redirect, went to a host not allowed
                    raise BrowserError(f"browser_action 'launch': {url} was not loaded: {self._blocked[-1]}.") from None
                raise

        return await self._do("launch", go)

    async def click(self, x: int, y: int) -> Snapshot:
        return await self._do("click", lambda: self.page.mouse.click(x, y), settle=True)

    async def hover(self, x: int, y: int) -> Snapshot:
        return await self._do("hover", lambda: self.page.mouse.move(x, y))

    async def type(self, text: str) -> Snapshot:
        return await self._do("type", lambda: self.page.keyboard.type(text), settle=True)

    async def press(self, key: str) -> Snapshot:
        async def press() -> None:
            try:
                await self.page.keyboard.press(key)
            except Exception as exc:
                if "Unknown key" in str(exc):
                    raise BrowserError(
                        f"Invalid value for parameter 'text': '{key}' is not a key name (Playwright's: Enter, Tab, ArrowDown, "
                        "Escape, Backspace, a character, or a combination such as Control+A)."
                    ) from None
                raise

        return await self._do("press", press, settle=True)

    async def scroll(self, down: bool) -> Snapshot:
        height = self.viewport[1]
        script = f"() => {{ window.scrollBy(0, {height if down else -height}); return [Math.round(window.scrollY), document.documentElement.scrollHeight]; }}"
        where: list[int] = []

        async def scroll() -> None:
            where.extend(await self.page.evaluate(script))

        shot = await self._do("scroll_down" if down else "scroll_up", scroll)
        return replace(shot, scrolled=(int(where[0]), int(where[1]))) if len(where) == 2 else shot

    async def resize(self, width: int, height: int) -> Snapshot:
        async def resize() -> None:
            await self.page.set_viewport_size({"width": width, "height": height})
            self.viewport = (width, height)

        return await self._do("resize", resize)

    async def _do(self, action: str, act: Callable[[], Awaitable[Any]], settle: bool = False) -> Snapshot:
        """The action, the page settled (a click or a key may start a navigation), its snapshot;
        bounded by the timeout, failing with the action's name."""
        from playwright.async_api import Error as PlaywrightError

        try:
            with anyio.fail_after(self.timeout * 2 + 5):  # Playwright's own timeouts come first
                await act()
                if settle:
                    await self.page.wait_for_load_state("load")
                return await self.snapshot()
        except BrowserError:
            raise
        except TimeoutError:
            raise BrowserError(f"browser_action '{action}' timed out after {self.timeout:g} s.") from None
        except PlaywrightError as exc:
            text = _first_line(exc)
            if "Timeout" in type(exc).__name__ or "Timeout " in text:
                raise BrowserError(f"browser_action '{action}' timed out after {self.timeout:g} s: {text}") from None
            if self.closed or "closed" in text.lower():
                raise BrowserError(f"browser_action '{action}': the browser was closed ({text}).") from None
            raise BrowserError(f"browser_action '{action}' failed: {text}") from None

    async def snapshot(self) -> Snapshot:
        page = self.page
        png = await self._screenshot(page)
        title = await page.title()
        console, self._console = tuple(self._console), []
        if self._dropped:
            console += (f"... and {self._dropped} more console lines",)
            self._dropped = 0
        blocked, self._blocked = tuple(dict.fromkeys(self._blocked)), []
        return Snapshot(png, page.url, title, self.viewport, console, blocked)

    async def _screenshot(self, page: Page) -> bytes:
        """The page's screenshot. A navigation the policy aborted swaps the page for Chromium's
        error page, and a capture in between fails ("Unable to capture screenshot"): the page
        settles and the capture is tried again, a few times."""
        from playwright.async_api import Error as PlaywrightError

        for pause in (0.05, 0.1, 0.2):
            try:
                return await page.screenshot(type="png", timeout=self.timeout * 1000)
            except PlaywrightError as exc:
                if "Unable to capture screenshot" not in str(exc):
                    raise
                await anyio.sleep(pause)
                await page.wait_for_load_state("load")
        return await page.screenshot(type="png", timeout=self.timeout * 1000)

    # ------------------------------------------------------------ what the page does

    def _follow(self, page: Page) -> None:
        """A page opened by the page (a popup, a link to a new tab) becomes the one shown."""
        if self.closed:
            return
        self._page = page
        page.on("console", self._log)
        page.on("pageerror", lambda error: self._line(f"[pageerror] {error}"))

    def _log(self, message: ConsoleMessage) -> None:
        self._line(f"[{message.type}] {message.text}")

    def _line(self, text: str) -> None:
        if len(self._console) >= MAX_CONSOLE_LINES:
            self._dropped += 1
            return
        self._console.append(text if len(text) <= MAX_LINE else text[:MAX_LINE] + "…")

    async def _route(self, route: Route) -> None:
        url = route.request.url
        # what the page holds itself (data:, blob:) goes nowhere; any other scheme than http(s) is refused
        why = None if urlsplit(url).scheme.lower() in ("data", "blob", "about") else policy.refusal(url, self.allowed_hosts)
        try:
            if why is not None:
                self._block(url, why)
                await route.abort("blockedbyclient")
            else:
                await route.continue_()
        except Exception as exc:  # the page or the browser went away meanwhile
            log.debug("route %s: %s", url, exc)

    def _watch(self, request: Request) -> None:
        """A redirect's next hop passes no route: the host resolver refuses it; this says why."""
        if request.redirected_from is None:
            return
        url = request.url
        why = policy.refusal(url, self.allowed_hosts)
        if why is not None:
            self._block(url, why)

    def _block(self, url: str, why: str) -> None:
        host = urlsplit(url).hostname or url
        self._blocked.append(f"blocked a request to {host} ({_clip(url, 200)}): not loopback and not in browser.allowedHosts")
        log.info("browser: %s", why)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return _clip(text[0] if text else type(exc).__name__, 300)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"

