"""How a submission is set up and started: SCBench's Python default or an environment file."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.foundation.layout import REQUIREMENTS, SCBENCH_TESTS_USER, SCBENCH_WORKDIR
from scbench_ci.problem.yaml_loader import read_yaml

SCBENCH_ENV = {
    "UV_CACHE_DIR": "/tmp/uv-cache",
    "PIP_CACHE_DIR": "/tmp/pip-cache-dir",
    "PIP_CONFIG_FILE": "/tmp/pip-conf",
}
"""The variables of SCBench's Python environment (`environment.env` of its
`docker-python3.12-uv.yaml`)."""
_USER = re.compile(r"([0-9]{1,10}):([0-9]{1,10})")
_RESERVED_IDS = {0: "root", 1001: "the test runner", 65534: "the idle process (nobody)"}
"""Ids the tests must not run as: root could rewrite the runner's reports, and the runner's and
the idle process's own would let the tests change them or kill the container."""
_PATH = re.compile(r"/[A-Za-z0-9._/-]{1,255}")
_SYSTEM_FOLDERS = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root",
    "/run", "/sbin", "/sys", "/tmp", "/usr", "/var", "/scbench", "/scbench-cache",
)  # fmt: skip
"""Folders a workspace volume must not cover or sit in: the image's own, HOME's /tmp and the
evaluator's (executors/docker/container_layout.py)."""
DEFAULT_COMMAND = "uv run"
DEFAULT_ENTRY_FORMAT = "{entry_file}.py"


@dataclass(frozen=True)
class Environment:
    """What the executor needs to know about the submission's runtime."""

    source: str
    """`default`, or the environment file it was read from."""
    image: str | None
    env: dict[str, str]
    setup_commands: tuple[str, ...]
    command: str
    entry_format: str
    network: str | None = None
    """`docker.network`: the Docker network the run's container is attached to (SCBench's
    `docker run --network`); None, the default bridge."""
    user: str = SCBENCH_TESTS_USER
    """`docker.user`: who setup and the tests run as (SCBench's `get_eval_user`)."""
    workdir: str = SCBENCH_WORKDIR
    """`docker.workdir`: where the workspace is and setup and the tests run."""

    def entrypoint(self, entry_file: str) -> str:
        return f"{self.command} {self.entry_format.format(entry_file=entry_file)}".strip()


def default_environment(submission: Path) -> Environment:
    """SCBench's environment for Python submissions (`uv run <entry_file>.py`).

    SCBench runs `uv init` and `uv add -r requirements.txt` for every submission and goes on
    whatever they exit with: `uv init` changes nothing in a project (so it is left out there),
    and without a requirements.txt `uv add` still makes the project's `.venv` before it fails
    (so it runs, and its failure is expected)."""
    setup = [] if (submission / "pyproject.toml").is_file() else ["uv init"]
    if (submission / REQUIREMENTS).is_file():
        setup.append(f"uv add -r {REQUIREMENTS}")
    else:
        setup.append(f"uv add -r {REQUIREMENTS} || true")
    return Environment(
        source="default",
        image=None,
        env=dict(SCBENCH_ENV),
        setup_commands=tuple(setup),
        command=DEFAULT_COMMAND,
        entry_format=DEFAULT_ENTRY_FORMAT,
    )


def load_environment(path: Path) -> Environment:
    """Read an environment file in SCBench's format (type, docker, environment, setup, commands)."""
    if not path.is_file():
        raise ProblemError(path, None, "environment file does not exist")
    data = read_yaml(path)  # the same guards as config.yaml's: size, depth, no YAML bombs
    if not isinstance(data, dict):
        raise ProblemError(path, None, "must be a YAML mapping")

    kind = data.get("type", "docker")
    if kind not in ("docker", "local"):
        raise ProblemError(path, "type", f"must be docker or local, got {kind!r}")
    docker = _section(path, data, "docker")
    environment = _section(path, data, "environment")
    setup = _section(path, data, "setup")
    commands = _section(path, data, "commands")

    image = docker.get("image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise ProblemError(path, "docker.image", f"must be an image name, got {image!r}")
    env = environment.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in env.items()
    ):
        raise ProblemError(path, "environment.env", "must map variable names to strings")
    network = docker.get("network")
    if network is not None and (not isinstance(network, str) or not network.strip()):
        raise ProblemError(path, "docker.network", f"must be a network's name, got {network!r}")
    entry_format = _string(path, commands, "commands.entry_file", DEFAULT_ENTRY_FORMAT)
    if "{entry_file}" not in entry_format:
        raise ProblemError(path, "commands.entry_file", "must contain {entry_file}")
    return Environment(
        source=str(path),
        image=image.strip() if image else None,
        env={key: str(value) for key, value in env.items()},
        setup_commands=(
            *_commands(path, setup, "commands"),
            *_commands(path, setup, "eval_commands"),
        ),
        command=_string(path, commands, "commands.command", DEFAULT_COMMAND),
        entry_format=entry_format,
        network=network.strip() if network else None,
        user=_user(path, docker.get("user")),
        workdir=_workdir(path, docker.get("workdir")),
    )


def _user(path: Path, value: object) -> str:
    """`docker.user` as `UID:GID` (SCBench passes it to `docker run --user`); names are not
    resolved, as the workspace's files are given to the ids before anything runs."""
    if value is None:
        return SCBENCH_TESTS_USER
    match = _USER.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise ProblemError(
            path,
            "docker.user",
            f"must be UID:GID in numbers (such as 1000:1000), got {str(value)[:100]!r}",
        )
    for kind, number in zip(("uid", "gid"), match.groups(), strict=True):
        if int(number) in _RESERVED_IDS or int(number) > 2**31 - 1:
            owner = _RESERVED_IDS.get(int(number), "out of range")
            raise ProblemError(
                path, "docker.user", f"{kind} {number} is not allowed for the tests ({owner})"
            )
    uid, gid = match.groups()
    return f"{int(uid)}:{int(gid)}"


def _workdir(path: Path, value: object) -> str:
    """`docker.workdir`: an absolute folder of the tests' own, apart from the image's system
    folders and the evaluator's."""
    if value is None:
        return SCBENCH_WORKDIR
    if (
        not isinstance(value, str)
        or not _PATH.fullmatch(value)
        or posixpath.normpath(value) != value
        or "//" in value
    ):
        raise ProblemError(
            path,
            "docker.workdir",
            f"must be an absolute, normalized folder path, got {str(value)[:100]!r}",
        )
    for folder in _SYSTEM_FOLDERS:
        if value == folder or value.startswith(f"{folder}/"):
            raise ProblemError(
                path, "docker.workdir", f"{value!r} is or is in {folder}, which the run needs"
            )
    return value


def _section(path: Path, data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ProblemError(path, key, "must be a mapping")
    return value


def _string(path: Path, section: dict[str, Any], dotted: str, default: str) -> str:
    value = section.get(dotted.split(".")[-1], default)
    if not isinstance(value, str):
        raise ProblemError(path, dotted, f"must be a string, got {value!r}")
    return value


def _commands(path: Path, setup: dict[str, Any], key: str) -> list[str]:
    value = setup.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ProblemError(path, f"setup.{key}", "must be a list of shell commands")
    return value
