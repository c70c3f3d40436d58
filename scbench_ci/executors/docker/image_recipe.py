"""The evaluation image's names and recipe (its Dockerfile), apart from the code that builds it,
which loads Docker's SDK: the options, the CLI's flags and a run's fingerprint need only these."""

from __future__ import annotations

import hashlib
import os
from importlib import resources

PUBLISHED_IMAGE = "ghcr.io/scbench/evaluate-env:python3.12"
DEFAULT_IMAGE = os.environ.get("SCBENCH_EVALUATION_IMAGE") or PUBLISHED_IMAGE
"""SCBench's evaluation image as the release workflow publishes it; SCBENCH_EVALUATION_IMAGE
names another (the action's image sets it to the name its release published)."""
SCBENCH_BASE = "ghcr.io/astral-sh/uv:python3.12-trixie-slim"
"""`docker.image` of SCBench's standard environment (configs/environments/
docker-python3.12-uv.yaml): the base of the default image."""


def dockerfile() -> bytes:
    return (resources.files("scbench_ci") / "images" / "evaluation.Dockerfile").read_bytes()


def recipe_digest() -> str:
    """The Dockerfile's digest: what a run of the default image or an environment file's base
    depends on besides the base."""
    return hashlib.sha256(dockerfile()).hexdigest()
