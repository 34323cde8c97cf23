"""The agent core: sessions, conversations, tasks and the loop. Knows nothing of LSP."""

from .session import Session
from .task import Task, build_task, resolve_model

__all__ = ["Session", "Task", "build_task", "resolve_model"]
