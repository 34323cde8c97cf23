"""One lock per file, held while an edit reads, asks and writes it (tools/gate.py); a lock
lives only while someone holds or waits for it."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import anyio


class FileLocks:
    def __init__(self) -> None:
        self._locks: dict[Path, tuple[anyio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, path: Path) -> AsyncIterator[None]:
        lock, users = self._locks.get(path, (None, 0))
        lock = lock or anyio.Lock()
        self._locks[path] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[path]
            if users == 1:
                del self._locks[path]
            else:
                self._locks[path] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
