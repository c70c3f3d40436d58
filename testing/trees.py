"""What the tree tests share: the real CLI in Docker, a planted secret, deep folders, and a
tree's entries as they are (`snapshot`)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

SECRET = "ghs_secret123"


def plant_secret(folder: Path) -> Path:
    """A file outside every tree under test, holding a fake token."""
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / "environ"
    secret.write_text(f"GITHUB_TOKEN={SECRET}\nACTIONS_RUNTIME_TOKEN={SECRET}\n")
    return secret


def nest(folder: Path, depth: int) -> None:
    """`depth` folders `d/d/...` below `folder`, made through descriptors (no path is that
    short)."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=descriptor)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    os.close(descriptor)


def scbench(image: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "scbench_ci",
            *map(str, args),
            "--executor",
            "docker",
            "--image",
            image,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def assert_no_secret(run: subprocess.CompletedProcess[str], output: Path) -> None:
    assert SECRET not in run.stdout
    assert SECRET not in run.stderr
    for path in output.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET.encode() not in path.read_bytes(), path


def assert_no_crash(run: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode != 3, run.stderr


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry under `root`, never following a link or opening anything but a file."""
    entries = {}
    for folder, folders, files in os.walk(root):
        here = Path(folder)
        folders[:] = [name for name in folders if here / name != skip]
        for name in folders + files:
            path = here / name
            info = path.lstat()
            if path.is_symlink():
                kind = f"link to {os.readlink(path)}"
            elif path.is_file():
                kind = "file " + hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                kind = "folder" if path.is_dir() else "special"
            entries[str(path.relative_to(root))] = f"{kind}, mode {info.st_mode:o}"
    return entries
