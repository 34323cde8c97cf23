"""browser_action (group browser): a headless Chromium the model drives, one per conversation
(server/browser/). Each action answers with the page's screenshot (an image the model sees), its
URL and title, and what its console said since the last action; the `browser` update tells the
editor (its tool card shows the screenshot).

Only `launch` asks the user (unless autoApprove.browser): it starts the browser and says where it
goes. Loopback only, unless browser.allowedHosts lets more; the page's own requests and redirects
are held to the same list (server/browser/driver.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..browser import policy
from ..errors import HostNotAllowed, InvalidParams, ToolError
from .base import Outcome, Params, Prepared, ToolContext, ToolSpec
from .flow import Trimmed

if TYPE_CHECKING:
    from protocol import BrowserSettings

    from ..browser import Browser, Snapshot
    from ..workspace import WorkspacePath

Action = Literal["launch", "click", "type", "press", "scroll_down", "scroll_up", "hover", "resize", "close"]

#: The parameter each action needs besides `action`.
NEEDS: dict[str, str] = {"launch": "url", "click": "coordinate", "hover": "coordinate", "type": "text", "press": "text", "resize": "size"}

NO_BROWSER = "No browser is open in this conversation: start one with action 'launch' and a url."


class BrowserActionParams(Params):
    action: Action
    url: Trimmed = None
    coordinate: Trimmed = None
    text: str | None = None
    size: Trimmed = None


async def _browser_action(ctx: ToolContext, p: BrowserActionParams, paths: list[WorkspacePath]) -> Prepared:
    settings = ctx.ports.config.settings.browser
    needed = NEEDS.get(p.action)
    if needed is not None and not getattr(p, needed):
        raise InvalidParams(f"Missing value for required parameter '{needed}' (action '{p.action}'). Please retry with a complete and valid tool call.")
    browsers = ctx.ports.browsers
    if p.action == "launch":
        return _launch(ctx, p, settings)
    if p.action == "close":
        async def close() -> str:
            return "The browser is closed." if await browsers.close(ctx.conversation_id) else "No browser was open."

        return Prepared(close, preapproved=True)
    browser = browsers.get(ctx.conversation_id)
    size = _parsed(policy.parse_size, p.size, "size") if p.action == "resize" else None
    if browser is None:
        raise ToolError(NO_BROWSER)
    where = _parsed(policy.parse_coordinate, p.coordinate, browser.viewport, "coordinate") if needed == "coordinate" else None

    async def act() -> Outcome:
        b = _still_open(ctx)
        if p.action == "click":
            shot = await b.click(*where)
        elif p.action == "hover":
            shot = await b.hover(*where)
        elif p.action == "type":
            shot = await b.type(p.text or "")
        elif p.action == "press":
            shot = await b.press((p.text or "").strip())
        elif p.action in ("scroll_down", "scroll_up"):
            shot = await b.scroll(p.action == "scroll_down")
        else:
            shot = await b.resize(*size)
        return _outcome(ctx, p, shot)

    return Prepared(_failing_as_tool_error(act), preapproved=True)


def _launch(ctx: ToolContext, p: BrowserActionParams, settings: BrowserSettings) -> Prepared:
    url = p.url or ""
    if "://" not in url and not url.startswith(("about:", "data:", "file:", "javascript:")):
        url = "http://" + url  # `localhost:3000`: the model means a web page
    found = policy.check(url, settings.allowed_hosts)
    if found is not None:
        what, why = found
        raise (HostNotAllowed if what == "host" else InvalidParams)(why)
    try:
        viewport = policy.parse_size(settings.viewport, "browser.viewport")
    except ValueError as exc:
        raise ToolError(f"The setting {str(exc).removeprefix('Invalid value for parameter ')}") from None

    async def launch() -> Outcome:
        browser = await ctx.ports.browsers.launch(ctx.conversation_id, ctx.turn_id, viewport, settings.allowed_hosts, settings.timeout_seconds)
        return _outcome(ctx, p, await browser.goto(url))

    allowed = ", ".join(settings.allowed_hosts) or "none"
    return Prepared(
        _failing_as_tool_error(launch),
        title=f"Open {url} in a headless browser?",
        detail=(
            f"Modus starts a headless Chromium ({viewport[0]}x{viewport[1]}) and loads {url}. The agent can then click, type and "
            f"read the page. It reaches loopback and the hosts of browser.allowedHosts ({allowed}) only. It closes when this turn ends."
        ),
    )


def _parsed(parse, value, *args):
    try:
        return parse(value, *args)
    except ValueError as exc:
        raise InvalidParams(f"{exc} Please retry with a valid value.") from None


def _still_open(ctx: ToolContext) -> Browser:
    browser = ctx.ports.browsers.get(ctx.conversation_id)
    if browser is None:
        raise ToolError(NO_BROWSER)
    return browser


def _failing_as_tool_error(run):
    from ..browser import BrowserError

    async def wrapped() -> Outcome:
        try:
            return await run()
        except BrowserError as exc:
            raise ToolError(str(exc)) from None

    return wrapped


def _outcome(ctx: ToolContext, p: BrowserActionParams, shot: Snapshot) -> Outcome:
    """The screenshot stored, the editor told, the model's text."""
    import protocol

    image_id = ctx.ports.images.put(ctx.conversation_id, "image/png", shot.png)
    width, height = shot.viewport
    ctx.host.publish(
        protocol.BrowserUpdate(
            conversation_id=ctx.conversation_id, agent=ctx.agent, task_id=ctx.task.id, turn_id=ctx.turn_id, tool_call_id=ctx.call_id,
            action=p.action, url=shot.url, title=shot.title, screenshot_id=image_id, width=width, height=height,
        )
    )
    did = {
        "launch": f"Launched the browser at {p.url}",
        "click": f"Clicked at {p.coordinate}",
        "hover": f"Moved the mouse to {p.coordinate}",
        "type": f"Typed {len(p.text or '')} characters",
        "press": f"Pressed {(p.text or '').strip()}",
        "scroll_down": "Scrolled down one page" + _at(shot),
        "scroll_up": "Scrolled up one page" + _at(shot),
        "resize": f"Resized the viewport to {width}x{height}",
    }[p.action]
    lines = [f"{did}.", f"URL: {shot.url}", f"Title: {shot.title}"]
    if shot.console:
        lines += ["Console since the last action:", *shot.console]
    else:
        lines.append("Console since the last action: (nothing)")
    lines += [f"Blocked: {b}" for b in shot.blocked]
    lines.append(f"The screenshot ({width}x{height} pixels) is attached. Close the browser (action 'close') when you are done with it.")
    return Outcome("\n".join(lines), images=(image_id,))


def _at(shot: Snapshot) -> str:
    return f" (at y={shot.scrolled[0]} of the page's {shot.scrolled[1]} pixels)" if shot.scrolled else ""


TOOLS = (
    ToolSpec(
        "browser_action",
        "Drive a headless browser, one page, and see it: each action answers with a screenshot, the page's URL and title "
        "and its console lines since the last action. Actions: launch (url: open the browser there; it must come first), "
        "click and hover (coordinate: \"x,y\" in pixels inside the viewport, read off the last screenshot), type (text), "
        "press (text: a key such as Enter, Tab, ArrowDown, Escape or Control+A), scroll_down and scroll_up (a page), "
        "resize (size: \"WxH\"), close. Loopback addresses (localhost, 127.0.0.1) only, unless the user allowed more hosts. "
        "The browser closes when your turn ends; close it yourself when done.",
        BrowserActionParams,
        _browser_action,
        group="browser",
        approval="browser",
    ),
)
