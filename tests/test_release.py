"""What a release is made of: one version everywhere, a wheel and sdist that PyPI would take, and
the `modus` command that `uv tool install` (or `pipx install`) of the wheel gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from protocol.names import PROTOCOL_VERSION
from server import __version__

ROOT = Path(__file__).resolve().parent.parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def test_one_version_everywhere():
    """pyproject.toml's version is the one source; the server's copy and the extension's agree."""
    extension = json.loads((ROOT / "editor-client" / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((ROOT / "editor-client" / "package-lock.json").read_text(encoding="utf-8"))
    assert {
        "server/__init__.py": __version__,
        "editor-client/package.json": extension["version"],
        "editor-client/package-lock.json": lock["version"],
    } == dict.fromkeys(["server/__init__.py", "editor-client/package.json", "editor-client/package-lock.json"], VERSION)


def _module(name: str) -> None:
    """The release tools are the test extra's: `pip install -e '.[test]'` (make does)."""
    try:
        __import__(name)
    except ImportError:
        pytest.fail(f"{name} is not installed in {sys.executable}: pip install -e '.[test]'")


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """`python -m build`: the sdist, then the wheel built from it (about 6 s)."""
    _module("build")
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_the_wheel_and_sdist_pass_twine_check(dist):
    _module("twine")
    names = sorted(p.name for p in dist.iterdir())
    assert names == [f"modus-{VERSION}-py3-none-any.whl", f"modus-{VERSION}.tar.gz"]
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(dist / names[0]) as wheel:
        files = set(wheel.namelist())
        metadata = wheel.read(f"modus-{VERSION}.dist-info/METADATA").decode()
    assert {"server/cli.py", "protocol/names.py", "server/demo/script.yaml", f"modus-{VERSION}.dist-info/licenses/LICENSE"} <= files
    assert "Requires-Python: >=3.11" in metadata and "License-Expression: MIT" in metadata


def test_uv_tool_install_of_the_wheel_gives_the_modus_command(dist, tmp_path):
    """The tool's own folders are temporary (uv's download cache is the user's, as with any uv
    command); its dependencies come from the package index."""
    _module("uv")
    from uv import find_uv_bin

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(tmp_path / "bin"),
               UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    wheel = dist / f"modus-{VERSION}-py3-none-any.whl"
    installed = subprocess.run([find_uv_bin(), "tool", "install", "--python", sys.executable, str(wheel)],
                               capture_output=True, text=True, env=env, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    modus = tmp_path / "bin" / ("modus.exe" if os.name == "nt" else "modus")
    version = subprocess.run([str(modus), "--version"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert (version.returncode, version.stdout.strip()) == (0, f"modus {VERSION} (protocol {PROTOCOL_VERSION})")
    # the installed command runs the installed package, not this checkout
    where = subprocess.run([str(tmp_path / "tools" / "modus" / "bin" / "python"), "-c", "import server; print(server.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert where.returncode == 0 and str(tmp_path / "tools") in where.stdout, where.stdout + where.stderr
