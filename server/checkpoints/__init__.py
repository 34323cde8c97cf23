"""Checkpoints: the workspace's files at any step of an agent's work, in a shadow git
repository in the user's own state folder (never in the workspace), to look at (`diff`,
`files_at`) and to go back to (`restore`, `restore_on_disk`). See shadow.py for how,
restore.py for restoring, git.py for what keeps git from running anything a repository chose.

For the caller (every method blocks: run it with anyio.to_thread.run_sync; calls on one
workspace are serialised, across threads and processes):

    repo = ShadowRepo(workspace_root, userdirs.state_dir(),  # one per workspace; cheap
                      keep_out=[session_state_dir])          # (where the shadow lives; a folder never held)
    if not repo.available(): tell the user repo.reason once; checkpoints stay off
    cp = repo.take("before write_to_file src/app.py", meta={"conversationId": c, "toolCallId": t})
    cp.id, cp.changed, cp.skipped                          # commit hash; files differ from the last?; left out, why
                                                           # (a folder, as "<folder>/": git would wait on a FIFO there)
    repo.list(meta={"conversationId": c})                  # newest first
    repo.diff(cp.id)                                       # [FileDiff(path, status, text, binary)]
    repo.take("before restoring " + cp.id)                  # makes the restore itself undoable
    changes = repo.restore(cp.id)                          # [FileChange]: what restoring writes, nothing written
    editable = [c for c in changes if c.via_editor]        # one workspace/applyEdit: old_text → new_text,
                                                           # create (new_text) or delete
    repo.restore_on_disk(cp.id, [c.path for c in changes if not c.via_editor])   # the rest
    # (a client that cannot apply edits: repo.restore_on_disk(cp.id) does it all)
    repo.recovered                                         # set once a damaged shadow repository was moved aside
"""

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
