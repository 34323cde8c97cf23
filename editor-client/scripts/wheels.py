"""Every dependency's wheel of the Modus wheel, for one VS Code target and CPython 3.11-3.13, into
one folder: then `pip install --no-index --find-links <folder> modus-<version>-py3-none-any.whl`
works with no package index (the offline .vsix's `bundled/wheels/`).

    python wheels.py --target linux-x64 --dest bundled/wheels bundled/modus-0.1.0-py3-none-any.whl

`pip download --platform ...` picks wheels for the target but evaluates environment markers on
*this* machine (pywin32 for Windows is never asked for on Linux): so the folder is then walked
from the Modus wheel's requirements, the markers evaluated as on the target for each Python, and
what is missing is downloaded too. A dependency with no wheel for the target fails, naming it.
Run by scripts/package.mjs; uses only pip and the standard library."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
    from packaging.utils import canonicalize_name, parse_wheel_filename
except ImportError:  # pip's own copy
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
    from pip._vendor.packaging.utils import canonicalize_name, parse_wheel_filename

PYTHONS = ("3.11", "3.12", "3.13")


def _manylinux(arch: str, newest: int) -> list[str]:
    """glibc 2.`newest` down to 2.17 (manylinux2014), and the plain linux tag."""
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(newest, 16, -1)]
    legacy = ["manylinux2014", "manylinux2010", "manylinux1"] if arch in ("x86_64", "i686") else ["manylinux2014"]
    return tags + [f"{name}_{arch}" for name in legacy] + [f"linux_{arch}"]


def _musllinux(arch: str) -> list[str]:
    return [f"musllinux_1_2_{arch}", f"musllinux_1_1_{arch}"]


def _linux(machine: str) -> dict[str, str]:
    return {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": machine}


def _darwin(machine: str) -> dict[str, str]:
    return {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": machine}


def _windows(machine: str) -> dict[str, str]:
    return {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "platform_machine": machine}


#: VS Code's targets (vsce's list, less `web`) → pip's platform tags and the target's markers.
#: Linux: VS Code's own binaries need glibc 2.28, so wheels built for up to that are taken; Alpine
#: is musl. macOS: 13 (Ventura) and later, since google-re2 has no wheel for older macOS and
#: CPython 3.13 (on macOS 11-12 the plain .vsix sets up from the package index instead).
TARGETS: dict[str, tuple[list[str], dict[str, str]]] = {
    "linux-x64": (_manylinux("x86_64", 28), _linux("x86_64")),
    "linux-arm64": (_manylinux("aarch64", 28), _linux("aarch64")),
    "linux-armhf": (_manylinux("armv7l", 28), _linux("armv7l")),
    "alpine-x64": (_musllinux("x86_64"), _linux("x86_64")),
    "alpine-arm64": (_musllinux("aarch64"), _linux("aarch64")),
    "darwin-x64": (list(mac_platforms((13, 0), "x86_64")), _darwin("x86_64")),
    "darwin-arm64": (list(mac_platforms((13, 0), "arm64")), _darwin("arm64")),
    "win32-x64": (["win_amd64"], _windows("AMD64")),
    "win32-arm64": (["win_arm64"], _windows("ARM64")),
}


class Missing(Exception):
    pass


def markers(target: str, python: str) -> dict[str, str]:
    return {**TARGETS[target][1], "python_version": python, "python_full_version": f"{python}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "implementation_version": f"{python}.0", "platform_release": "", "platform_version": ""}


def supported(target: str, python: str) -> set[Tag]:
    version = tuple(int(p) for p in python.split("."))
    platforms = TARGETS[target][0]
    return set(cpython_tags(version, platforms=platforms)) | set(
        compatible_tags(version, interpreter=f"cp{version[0]}{version[1]}", platforms=platforms))


def requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        meta = HeaderParser().parsestr(z.read(name).decode("utf-8"))
    return [Requirement(r) for r in meta.get_all("Requires-Dist") or []]


def pip_download(target: str, python: str, dest: Path, reqs: list[str], *, deps: bool) -> None:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--implementation", "cp",
               "--python-version", python, "--dest", str(dest)]
    for platform in TARGETS[target][0]:
        command += ["--platform", platform]
    if not deps:
        command.append("--no-deps")
    done = subprocess.run(command + reqs, capture_output=True, text=True)
    if done.returncode != 0:
        found = re.search(r"(?:satisfies the requirement|No matching distribution found for) (\S+)", done.stderr)
        what = found.group(1) if found else " ".join(reqs)
        raise Missing(f"no wheel of {what} for {target} (CPython {python}; pip's platforms "
                      f"{', '.join(TARGETS[target][0][:3])}…): pip said:\n{done.stderr.strip()[-2000:]}")


def walk(target: str, python: str, dest: Path, root: Path) -> list[Requirement]:
    """The requirements, reached from the root wheel as the target's Python would, that no wheel
    in dest satisfies."""
    tags = supported(target, python)
    wheels: dict[str, list[tuple[Path, object]]] = {}
    for path in dest.glob("*.whl"):
        name, version, _, wheel_tags = parse_wheel_filename(path.name)
        if wheel_tags & tags:
            wheels.setdefault(canonicalize_name(name), []).append((path, version))
    missing: list[Requirement] = []
    seen: set[tuple[str, str]] = set()
    todo: list[tuple[Path, frozenset[str]]] = [(root, frozenset())]
    while todo:
        wheel, extras = todo.pop()
        for req in requirements(wheel):
            if req.marker and not any(req.marker.evaluate({**markers(target, python), "extra": e}) for e in extras or {""}):
                continue
            key = (canonicalize_name(req.name), ",".join(sorted(req.extras)))
            if key in seen:
                continue
            seen.add(key)
            fits = [p for p, v in wheels.get(key[0], []) if req.specifier.contains(v, prereleases=True)]
            if not fits:
                missing.append(req)
                continue
            todo.append((fits[0], frozenset(req.extras)))
    return missing


def _bare(req: Requirement) -> str:
    """The requirement without its marker (pip would evaluate it on this machine)."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, choices=sorted(TARGETS))
    parser.add_argument("--dest", required=True, type=Path)
    parser.add_argument("wheel", type=Path)
    args = parser.parse_args()
    args.dest.mkdir(parents=True, exist_ok=True)
    try:
        for python in PYTHONS:
            pip_download(args.target, python, args.dest, [str(args.wheel.resolve())], deps=True)
            for rounds in range(20):
                missing = walk(args.target, python, args.dest, args.wheel)
                if not missing:
                    break
                print(f"wheels: {args.target}, CPython {python}: also {', '.join(map(str, missing))} "
                      f"(markers of the target)", file=sys.stderr)
                pip_download(args.target, python, args.dest, [_bare(r) for r in missing], deps=True)
            else:
                raise Missing(f"{args.target}, CPython {python}: still missing {', '.join(map(str, missing))}")
    except Missing as e:
        print(f"wheels: {e}", file=sys.stderr)
        return 1
    finally:
        for own in args.dest.glob(f"{args.wheel.name.split('-')[0]}-*.whl"):
            own.unlink()  # the Modus wheel itself lies beside the folder, not in it
    return 0


if __name__ == "__main__":
    sys.exit(main())
