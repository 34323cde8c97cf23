import sys
from pathlib import Path

import pytest

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
    # The run's PostgreSQL folder: named by the controller, inherited by the xdist workers it starts.
    if not hasattr(config, "workerinput"):
        os.environ["MODUS_TEST_PG_DIR"] = tempfile.mkdtemp(prefix="modus-test-pg-")


#: The modules whose tests take 5 s and more (a dead server's lease runs 30 s): collected first, so
#: that xdist hands them out at the start of a run rather than leaving one worker busy with one of
#: them at its end while the others are done.
LONG_FIRST = (
    "tests/e2e/test_space_faults.py", "tests/test_release.py", "tests/e2e/test_restart.py", "tests/e2e/test_untrusted.py",
    "tests/e2e/test_browser.py", "tests/e2e/test_space.py", "tests/e2e/test_context.py", "tests/e2e/test_plan_mode.py",
    "tests/e2e/test_mcp.py", "tests/e2e/test_lsp.py", "tests/e2e/test_models_check.py", "tests/e2e/test_acp.py",
)


def pytest_collection_modifyitems(items):
    rank = {module: i for i, module in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))  # stable: each module's order kept


def pytest_terminal_summary(terminalreporter, config):
    """How long the run's PostgreSQL took to start (initdb and pg_ctl start), when one was."""
    import os

    started = Path(os.environ.get("MODUS_TEST_PG_DIR", "/nonexistent")) / "started-in"
    if not hasattr(config, "workerinput") and started.exists():
        terminalreporter.write_line(f"PostgreSQL for the tests: a throwaway cluster, started in {started.read_text()} s")


def pytest_unconfigure(config):
    import os

    if not hasattr(config, "workerinput") and os.environ.get("MODUS_TEST_PG_DIR"):
        import pg_cluster

        pg_cluster.stop(Path(os.environ["MODUS_TEST_PG_DIR"]))


@pytest.fixture(scope="session")
def pg_cluster_url() -> str:
    """The URL of the run's PostgreSQL cluster (its superuser, database `postgres`), started by
    the first worker that asks; skipped only when the server binaries cannot be had."""
    import os

    import pg_cluster

    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install -e '.[test]')")
    if pg_cluster.binaries() is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are missing (scripts/postgresql.sh installs them; make test runs it)")
    return pg_cluster.cluster_url(Path(os.environ["MODUS_TEST_PG_DIR"]))


@pytest.fixture
def pg_url(pg_cluster_url) -> str:
    """A new, empty database of the run's cluster for this test, dropped after it: its URL."""
    import pg_cluster

    with pg_cluster.database(pg_cluster_url) as url:
        yield url


@pytest.fixture
def own_pg(pg_cluster_url):
    """A PostgreSQL cluster of this test's own, to stop and start (a fault test must not stop the
    run's shared one): (its URL, its folder for pg_cluster.halt and resume). Removed after it."""
    import tempfile

    import pg_cluster

    folder = Path(tempfile.mkdtemp(prefix="modus-pg-own-"))  # not under pytest's 0700 folders: its owner reaches it
    try:
        yield pg_cluster.cluster_url(folder), folder
    finally:
        pg_cluster.stop(folder)
