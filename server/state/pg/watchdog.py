"""A bound on every call of a space's synchronous store.

The core calls the store without `await`, so a call that waits on PostgreSQL waits on the event
loop: the whole server stops while it does. The connection's own limits (tcp_user_timeout, the
keepalives) end a call whose peer is gone, but not one whose peer is there and does not answer
(a frozen PostgreSQL, a proxy that hangs: their kernel acknowledges everything). The watchdog ends
those: one daemon thread that, once a call has run CALL_LIMIT seconds, shuts its connection's
socket down, so that the blocked read returns and the call fails like any lost connection.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator

import psycopg

#: Seconds a call of the store may take (a history page of a million messages takes a millisecond).
CALL_LIMIT = 10.0
#: How often the watchdog looks.
TICK = 0.25
#: Why a call (or the feed's, bounded the same: server/agent/space.py) failed when it timed out.
NO_ANSWER = f"no answer from PostgreSQL in {CALL_LIMIT:g} s"


class Overdue(psycopg.OperationalError):
    """A call that had no answer within CALL_LIMIT: its connection was cut."""


class _Call:
    __slots__ = ("deadline", "fd", "cut")

    def __init__(self, deadline: float, fd: int):
        self.deadline, self.fd, self.cut = deadline, fd, False


class Watchdog:
    def __init__(self):
        self._calls: set[_Call] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watch(self, db: psycopg.Connection) -> Iterator[None]:
        """The block runs on `db`; past the limit its socket is shut down and the block's failure
        is Overdue (an OperationalError, as a lost connection's)."""
        call = _Call(time.monotonic() + CALL_LIMIT, db.fileno())
        with self._lock:
            self._calls.add(call)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="modus-space-watchdog", daemon=True)
                self._thread.start()
        try:
            yield
        except psycopg.OperationalError:
            if call.cut:
                raise Overdue(NO_ANSWER) from None
            raise
        finally:
            with self._lock:
                self._calls.discard(call)

    def _run(self) -> None:
        while True:
            time.sleep(TICK)
            now = time.monotonic()
            with self._lock:
                for call in self._calls:
                    if not call.cut and now >= call.deadline:
                        call.cut = True
                        _shut(call.fd)  # under the lock: the call is still running, its socket still its own


def _shut(fd: int) -> None:
    """Shuts the socket down for both sides (every descriptor of it): a read blocked on it returns."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


#: The process's one watchdog (its thread starts with the first call).
WATCHDOG = Watchdog()
