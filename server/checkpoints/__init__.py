"""Checkpoints: the workspace's files at any step of an agent's work, in a shadow git
repository under the state folder, to look at (`diff`, `files_at`) and to go back to
(`restore`, `restore_on_disk`). See shadow.py."""

from .git import CheckpointError, CheckpointsUnavailable, find_git
from .restore import FileChange
from .shadow import Checkpoint, FileDiff, FileVersion, ShadowRepo, Skipped

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointsUnavailable",
    "FileChange",
    "FileDiff",
    "FileVersion",
    "ShadowRepo",
    "Skipped",
    "find_git",
]
