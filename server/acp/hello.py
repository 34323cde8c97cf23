"""What Modus answers to an ACP client's `initialize`, as plain JSON.

The ACP package takes most of a second to load (its schema is hundreds of pydantic models), and a
client waits for `initialize` before anything else: `modus acp` answers it from here while the
package and the rest of the agent load in a worker thread (server/acp/run.py). ModusAgent's own
`initialize` answers with the same, validated by the package's schema.
"""

from __future__ import annotations

from typing import Any

from .. import __version__

#: The ACP version Modus speaks: the package's PROTOCOL_VERSION (a test checks that they agree).
PROTOCOL_VERSION = 1


def initialize_result(client_version: int) -> dict[str, Any]:
    """The `initialize` result (camelCase, as on the wire) for a client of that protocol version."""
    return {
        "protocolVersion": min(client_version, PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": False, "sse": False, "acp": False},
            "sessionCapabilities": {"list": {}},
            "auth": {},
        },
        "authMethods": [],
        "agentInfo": {"name": "modus", "title": "Modus", "version": __version__},
    }


def early(message: dict[str, Any]) -> int | None:
    """The client's protocol version when `message` is an `initialize` request that can be answered
    before the package has loaded (its params the object the schema wants, its version a number);
    None otherwise (the package answers it, with its own checks)."""
    params = message.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if message.get("method") != "initialize" or "id" not in message:
        return None
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version < 65536:
        return None
    capabilities = params.get("clientCapabilities")
    return version if capabilities is None or isinstance(capabilities, dict) else None
