import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots", action="store_true", help="write the prompt snapshots anew (make snapshots)"
    )


def pytest_configure(config):
    """The user's state folder ($XDG_STATE_HOME/modus: the approvals given per workspace, the
    checkpoints' shadow repositories) is the test run's own, for every server a test starts."""
    import os
    import tempfile

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="modus-test-state-")
    os.environ["CLAUDE_CONFIG_DIR"] = tempfile.mkdtemp(prefix="modus-test-claude-")  # no hook of this machine's user runs
