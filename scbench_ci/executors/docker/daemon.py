"""The Docker daemon: a client for it, its errors as one line each, and the image a run needs."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, TextIO

import docker
import requests
from docker.constants import MINIMUM_DOCKER_API_VERSION
from docker.errors import APIError, DockerException, ImageNotFound, InvalidVersion

from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.trust.terminal import inert

DEFAULT_SOCKET = "/var/run/docker.sock"
API_TIMEOUT_S = 120
LOCAL_INSTEAD = "or pass --executor local to run the tests on this machine without isolation"
"""What to do without a usable daemon: the local executor is never chosen for the user."""


def connect() -> docker.DockerClient:
    """A client for the daemon DOCKER_HOST names (else the local socket), or a one-line error."""
    # Making the client asks the daemon for its API version, and refuses one too old.
    try:
        return docker.from_env(timeout=API_TIMEOUT_S)
    except DockerException as error:
        host = os.environ.get("DOCKER_HOST")
        where = f"DOCKER_HOST={host}" if host else DEFAULT_SOCKET
        if isinstance(error, InvalidVersion):
            raise InfrastructureError(
                f"the Docker daemon at {where} is too old (its API is below "
                f"{MINIMUM_DOCKER_API_VERSION}): upgrade Docker, {LOCAL_INSTEAD}"
            ) from None
        if "Permission denied" in str(error):
            raise InfrastructureError(
                f"permission denied on the Docker socket ({where}): "
                "add your user to the docker group, or run as root"
            ) from None
        raise InfrastructureError(
            f"cannot reach the Docker daemon at {where}: start Docker (or point DOCKER_HOST at "
            f"a running daemon), {LOCAL_INSTEAD}"
        ) from None


@contextlib.contextmanager
def docker_errors() -> Iterator[None]:
    """Turn whatever the Docker SDK raises into a one-line InfrastructureError."""
    try:
        yield
    except (DockerException, requests.RequestException) as error:
        raise InfrastructureError(f"Docker failed: {reason(error)}") from None


def ensure_image(client: docker.DockerClient, image: str, echo: TextIO | None) -> str:
    """Pull the image unless it is already here, showing the progress on `echo`; its id."""
    try:
        return str(client.images.get(image).id)
    except ImageNotFound:
        pass
    except APIError as error:  # a malformed name
        raise InfrastructureError(f"cannot use image {image!r}: {reason(error)}") from None
    say(echo, f"pulling {image} ...")
    try:
        _show_progress(client.api.pull(image, stream=True, decode=True), echo)
    except (DockerException, requests.RequestException) as error:
        raise _pull_failed(image, reason(error)) from None
    except _PullError as error:
        raise _pull_failed(image, str(error)) from None
    return str(client.images.get(image).id)


class _PullError(Exception):
    """An error the daemon reported in the middle of the pull's progress stream."""


def _show_progress(events: Iterable[Mapping[str, Any]], echo: TextIO | None) -> None:
    shown = set()
    for event in events:
        if "error" in event:
            raise _PullError(_first_line(event["error"]))
        status = event.get("status", "")
        line = f"{event['id']}: {status}" if event.get("id") else status
        if line and line not in shown:
            shown.add(line)
            say(echo, f"  {line}")


def _pull_failed(image: str, reason: str) -> InfrastructureError:
    return InfrastructureError(
        f"could not pull {image}: {reason}; pull or build it yourself, or pass --image"
    )


def reason(error: Exception) -> str:
    explanation = getattr(error, "explanation", None)
    return _first_line(str(explanation or error))


def timestamp(text: object) -> float | None:
    """A time as the Docker API gives it (`CreatedAt`, `Created`), in seconds since the epoch;
    None when it cannot be read."""
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return None


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else "unknown error"


def say(echo: TextIO | None, text: str) -> None:
    """One line where the runs' output goes, inert (it may quote the daemon's or an image's
    words)."""
    if echo is not None:
        echo.write(inert(text, one_line=True) + "\n")
        echo.flush()
