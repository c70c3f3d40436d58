"""The images the suite runs: configurable, so a machine with a registry can use the public
ones; where none is reachable, scripts/provision-docker.sh builds local stand-ins under these
names."""

from __future__ import annotations

import os

from docker.errors import BuildError

# Image names are configurable so a machine with a registry can use the public images; where
# none is reachable, scripts/provision-docker.sh builds local stand-ins under these names.
TEST_IMAGE = os.environ.get("SCBENCH_TEST_IMAGE", "ghcr.io/astral-sh/uv:python3.12-bookworm-slim")
"""A small Python image most of the suite runs in (`--image`); the default image, SCBench's
evaluation image, is what runs with none (scripts/provision-docker.sh has it built)."""


ACTION_BASE_IMAGE = os.environ.get("SCBENCH_ACTION_BASE_IMAGE", "python:3.12-slim")


ACTION_IMAGE = "scbench-ci-action:test"
"""The action's image as the suite builds it; each test process tags it `<this>-<pid>`."""


PROVISION = "scripts/provision-docker.sh"


def build_log(error: BuildError, chars: int = 3000) -> str:
    """The last `chars` of a failed build's log, for the failure message."""
    log = "".join(str(entry.get("stream") or entry.get("error") or "") for entry in error.build_log)
    return log[-chars:]
