"""A space's PostgreSQL URL, as it may be shown: its host, port and database, never its password."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit


def where(url: str) -> str:
    """`host:port/database` of a `postgresql://` URL (what a message names), without user or
    password; the libpq defaults when left out (localhost, 5432)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        port = parts.port or 5432
    except ValueError:
        return "an unreadable PostgreSQL URL"
    if ":" in host:
        host = f"[{host}]"
    database = unquote(parts.path.lstrip("/")) or "(the user's database)"
    return f"{host}:{port}/{database}"


def secrets(url: str) -> list[str]:
    """The password of the URL, as written and decoded (what a message must never hold)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return []
    if not password:
        return []
    return sorted({password, unquote(password)}, key=len, reverse=True)


def redacted(text: str, url: str, extra: str | None = None) -> str:
    """`text` with the URL's password (and `extra`, a password given apart) replaced by `***`."""
    for secret in [*secrets(url), *([extra] if extra else [])]:
        text = text.replace(secret, "***")
    return text
