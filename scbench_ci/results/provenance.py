"""When and with what results were made: the moment as results.json holds it (`started_at`),
and the versions of the tools a run used (`tool_versions`)."""

from __future__ import annotations

import contextlib
import platform
from datetime import UTC, datetime
from importlib import metadata

from scbench_ci.foundation.version import __version__


def now() -> str:
    """This moment, as results.json's `started_at` holds it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def tool_versions() -> dict[str, str]:
    # The Python scbench-ci runs on here; the tests' is the image's (each checkpoint's image).
    versions = {"scbench-ci": __version__, "host-python": platform.python_version()}
    for package in ("uv", "docker"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return versions
