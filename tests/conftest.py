import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def pytest_addoption(parser):
    parser.addoption(
        "--update-snapshots", action="store_true", help="write the prompt snapshots anew (make snapshots)"
    )
