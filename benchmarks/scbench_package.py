"""SCBench's own package, from a checkout the user gives: its environment synced from the
checkout's uv.lock, which of its runners it is, the image it evaluates in, and one checkpoint
evaluated by it (benchmarks/scbench_checkpoint.py, run with that environment's Python).

Nothing of SCBench's is in this repository: the checkout is the user's, its environment is made
by `uv sync --frozen` under ~/.cache/scbench-ci/against-scbench/<commit>, and SCBench's code runs
only against the local Docker daemon.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import yaml
from uv import find_uv_bin

from scbench_ci.job.fingerprint import fingerprint

CHECKPOINT_SCRIPT = Path(__file__).resolve().parent / "scbench_checkpoint.py"
ENVIRONMENTS = Path.home() / ".cache/scbench-ci/against-scbench"
DEFAULT_ENVIRONMENT = Path("configs/environments/docker-python3.12-uv.yaml")
"""SCBench's default environment (the one its documentation's `eval` examples name)."""
OURS = "dev.scbench-ci.against-scbench"
"""The label of the image this benchmark tags with SCBench's name, and removes after."""
REQUIRED_FIELDS = {"description": None, "tags": ["example"]}
"""Fields SCBench's ProblemConfig requires and scbench-ci's examples leave out (None: the
problem's name); no part of SCBench's evaluation reads them."""
RUN_FILE = "run.json"
"""Beside SCBench's files: the image it ran in, the inputs' digest and the process's wall
time."""
SCBENCH_TIMEOUT_S = 3600
"""SCBench sets no session timeout; a checkpoint it has not finished after this is stopped."""


class NotCompared(Exception):
    """A case one side could not evaluate (the message says which, and where its log is)."""


@dataclass(frozen=True)
class Environment:
    """An SCBench checkout and the environment synced from its uv.lock."""

    source: Path
    commit: str
    choice: str
    """scbench-ci's `--scbench` for this runner: `1.0` where SCBench collects the tests before
    it runs them (`evaluation/collection.py`), else `paper`."""
    python: Path
    sync_s: float
    size_bytes: int

    @property
    def environment_file(self) -> Path:
        return self.source / DEFAULT_ENVIRONMENT


def synced(source: Path, python: str) -> Environment:
    """The checkout's environment, synced now (`uv sync --frozen`, a no-op when it is)."""
    source = source.resolve()
    revision = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    if revision.returncode != 0:
        raise SystemExit(
            f"{source}: not a git checkout of SCBench (its commit names the environment): "
            f"{revision.stderr.strip()}"
        )
    commit = revision.stdout.strip()
    choice = "1.0" if (source / "src/slop_code/evaluation/collection.py").is_file() else "paper"
    target = ENVIRONMENTS / commit[:12]
    started = time.monotonic()
    subprocess.run(
        [str(find_uv_bin()), "sync", "--frozen", "--quiet", "--python", python],
        cwd=source,
        env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(target)},
        check=True,
    )
    sync_s = time.monotonic() - started
    size = sum(
        entry.stat(follow_symlinks=False).st_size
        for entry in target.rglob("*")
        if entry.is_file() and not entry.is_symlink()
    )
    return Environment(source, commit, choice, target / "bin/python", sync_s, size)


def for_scbench(problem: Path, folder: Path) -> Path:
    """The problem as SCBench's loader takes it: itself, or a copy in `folder` with the fields
    SCBench requires and the problem lacks."""
    config = yaml.safe_load((problem / "config.yaml").read_text())
    missing = {
        field: value if value is not None else config["name"]
        for field, value in REQUIRED_FIELDS.items()
        if not config.get(field)
    }
    if not missing:
        return problem
    copy = folder / problem.name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(problem, copy, symlinks=True)
    (copy / "config.yaml").write_text(yaml.safe_dump({**config, **missing}, sort_keys=False))
    return copy


def inputs_digest(problem: Path, submission: Path) -> str:
    """What an evaluation read of the user's files: the problem's and the submission's trees."""
    return fingerprint(problem, {"submission": fingerprint(submission, {})})


def provide_image(environment: Environment, image_id: str, folder: Path) -> str:
    """Tag `image_id` with the name SCBench gives its evaluation image, and, where SCBench labels
    it (1.0), with the hash of SCBench's own recipe, so that SCBench takes it as its image and
    builds none (its recipe fetches nvm, rustup and MinIO from hosts this machine may not reach).
    Returns the name. An image of that name that this benchmark did not make is left alone."""
    _run_script(environment, ["image", str(environment.environment_file)], folder)
    described = json.loads((folder / "image.json").read_text())
    name = str(described["name"])
    client = docker.from_env()
    try:
        try:
            present = client.images.get(name)
        except docker.errors.ImageNotFound:
            present = None
        if present is not None and OURS not in (present.labels or {}):
            raise SystemExit(
                f"{name} is an image this benchmark did not make (SCBench's own, perhaps): "
                f"retag or remove it first, so that SCBench uses scbench-ci's image"
            )
        labels = {OURS: environment.choice}
        if described["label"]:
            labels[described["label"]] = described["hash"]
        client.images.build(
            fileobj=io.BytesIO(f"FROM {image_id}\n".encode()), tag=name, labels=labels, rm=True
        )
    finally:
        client.close()
    return name


def remove_image(name: str) -> None:
    """The tag `provide_image` made, if it is still ours."""
    client = docker.from_env()
    try:
        image = client.images.get(name)
        if OURS in (image.labels or {}):
            client.images.remove(name, noprune=False)
    except docker.errors.ImageNotFound:
        pass
    finally:
        client.close()


@dataclass(frozen=True)
class ScbenchEvaluation:
    checkpoint: dict[str, Any]
    """benchmarks/scbench_checkpoint.py's `checkpoint.json`."""
    wall_s: float
    """The whole process: SCBench's imports, its image check and `run_checkpoint_pytest`."""


def evaluate(
    environment: Environment,
    problem: Path,
    checkpoint: str,
    submission: Path,
    folder: Path,
    image: str,
    image_id: str,
    inputs: str,
) -> ScbenchEvaluation:
    """One checkpoint evaluated by SCBench's package in `image` (whose id is `image_id`); its
    files in `folder`, with `inputs` (`inputs_digest`) beside them."""
    started = time.monotonic()
    arguments = [str(environment.environment_file), str(problem), checkpoint, str(submission)]
    _run_script(environment, ["evaluate", *arguments], folder, image=image)
    wall_s = time.monotonic() - started
    run = {"image": image_id, "inputs": inputs, "wall_s": wall_s}
    (folder / RUN_FILE).write_text(json.dumps(run))
    return ScbenchEvaluation(json.loads((folder / "checkpoint.json").read_text()), wall_s)


def earlier(folder: Path, image_id: str, inputs: str) -> ScbenchEvaluation | None:
    """What an earlier `evaluate` left in `folder`, if it ran in the image `image_id` on the same
    problem and submission (`inputs`, `inputs_digest`)."""
    try:
        run = json.loads((folder / RUN_FILE).read_text())
        checkpoint = json.loads((folder / "checkpoint.json").read_text())
    except FileNotFoundError:
        return None
    if (run["image"], run.get("inputs")) != (image_id, inputs):
        return None
    return ScbenchEvaluation(checkpoint, float(run["wall_s"]))


def _run_script(
    environment: Environment, arguments: list[str], folder: Path, *, image: str | None = None
) -> None:
    """benchmarks/scbench_checkpoint.py run with the environment's Python, writing into
    `folder`, its output in `folder/scbench.log`."""
    variables = dict(os.environ)
    if os.getuid() == 0:
        # SCBench gives the workspace to the user that runs it, unless HUID/HGID (its variables
        # for the host's user) say another: as root, only root could write there, where its
        # tests run as 1000:1000. A usual host's user is 1000.
        variables |= {"HUID": "1000", "HGID": "1000"}
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "scbench.log"
    with log.open("w") as written:
        process = subprocess.Popen(
            [str(environment.python), str(CHECKPOINT_SCRIPT), *arguments, str(folder)],
            stdout=written,
            stderr=subprocess.STDOUT,
            env=variables,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=SCBENCH_TIMEOUT_S)
        except subprocess.TimeoutExpired as timeout:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            if image is not None:
                _stop_containers_of(image)
            message = f"SCBench did not finish in {SCBENCH_TIMEOUT_S} s; its log: {log}"
            raise NotCompared(message) from timeout
    if code != 0:
        raise NotCompared(f"SCBench's {arguments[0]} exited with {code}; its log: {log}")


def _stop_containers_of(image: str) -> None:
    """SCBench's `docker run --rm` outlives its client: the containers of the image this
    benchmark tagged (no one else's) are removed."""
    client = docker.from_env()
    try:
        for container in client.containers.list(filters={"ancestor": image}, ignore_removed=True):
            container.remove(force=True)
    finally:
        client.close()
