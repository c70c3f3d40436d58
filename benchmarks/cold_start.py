"""Cold start of the action: the time from `docker run` of its image to the first test starting,
with the image prebuilt (a release: action.yml runs `docker://ghcr.io/<owner>/evaluate:<version>`)
and with the image built from the Dockerfile first (`image: Dockerfile`: every job builds it);
and the image's size.

    python benchmarks/cold_start.py [--base-image IMAGE] [--test-image IMAGE] [--repeat N]
                                    [--dockerfile PATH]

Each repeat builds the image without Docker's cache (the base image is already here: pulling it,
or pulling the prebuilt image, is not timed), then runs it as GitHub's runner runs the action's
container, on examples/wordstat checkpoint_2's reference solution with `cache: false` (a fresh
runner has no cached test runner). "first test" is the first test's line in the streamed pytest
output. Figures are medians over the repeats. The images it builds are removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import docker
import yaml
from docker.errors import APIError, ImageNotFound
from docker.models.containers import Container

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
TAG = "scbench-ci-action:cold-start"
WORKSPACE = "/github/workspace"
INPUTS = {
    "problem": "problems/wordstat",
    "checkpoint": "checkpoint_2",
    "submission": "submission",
    "cache": "false",
    "upload_artifact": "false",
}
FIRST_TEST = re.compile(rb"^tests/test_\w+\.py::\S+", re.MULTILINE)
_LAYER_ID = re.compile(r"^ ---> ([0-9a-f]{12})$")


def build(client: docker.DockerClient, base_image: str, dockerfile: Path, built: set[str]) -> float:
    """Seconds to build the image, every layer anew; the ids of what it made go into `built`."""
    base_id = str(client.images.get(base_image).id).removeprefix("sha256:")[:12]
    started = time.perf_counter()
    image, log = client.images.build(
        path=str(ROOT),
        dockerfile=str(dockerfile),
        tag=TAG,
        buildargs={"BASE_IMAGE": base_image},
        nocache=True,
        rm=True,
        forcerm=True,
    )
    elapsed = time.perf_counter() - started
    for entry in log:
        stream = entry.get("stream") if isinstance(entry, dict) else None
        found = _LAYER_ID.match(str(stream or "").rstrip("\n"))
        if found and found.group(1) != base_id:
            built.add(found.group(1))
    built.add(str(image.id))
    return elapsed


def run_to_first_test(
    client: docker.DockerClient, test_image: str, workspace: Path
) -> tuple[float, float, float]:
    """`docker run` of the action's container as the runner starts it: seconds to its first line
    of output, to the first test, and to its end."""
    environment = {
        f"INPUT_{name.upper()}": str(spec.get("default", ""))
        for name, spec in ACTION["inputs"].items()
    }
    environment |= {f"INPUT_{name.upper()}": value for name, value in INPUTS.items()}
    environment |= {
        "INPUT_IMAGE": test_image,
        "GITHUB_WORKSPACE": WORKSPACE,
        "GITHUB_ACTIONS": "true",
    }
    shutil.rmtree(workspace / ".scbench", ignore_errors=True)
    started = time.perf_counter()
    container: Container = client.containers.run(
        TAG,
        entrypoint=[ACTION["runs"]["entrypoint"]],
        command=list(ACTION["runs"]["args"]),
        environment=environment,
        working_dir=WORKSPACE,
        volumes={
            "/var/run/docker.sock": {"bind": "/var/run/docker.sock", "mode": "rw"},
            str(workspace): {"bind": WORKSPACE, "mode": "rw"},
        },
        detach=True,
    )
    try:
        first_line = first_test = None
        output = b""
        for chunk in container.logs(stream=True, follow=True):
            now = time.perf_counter() - started
            first_line = first_line if first_line is not None else now
            output += chunk
            if first_test is None and FIRST_TEST.search(output):
                first_test = now
        exit_code = container.wait()["StatusCode"]
        ended = time.perf_counter() - started
    finally:
        container.remove(force=True)
    if exit_code != 0 or first_line is None or first_test is None:
        raise SystemExit(
            f"the action failed (exit {exit_code}):\n{output.decode(errors='replace')}"
        )
    return first_line, first_test, ended


def sizes(client: docker.DockerClient, base_image: str) -> tuple[int, int, int]:
    """The image's size, its base's, and the image saved and gzip-compressed (about what a pull
    downloads)."""
    image = client.images.get(TAG)
    counter = _Counter()
    with gzip.GzipFile(fileobj=counter, mode="wb", compresslevel=6) as compressor:
        for chunk in image.save(named=True):
            compressor.write(chunk)
    return image.attrs["Size"], client.images.get(base_image).attrs["Size"], counter.size


class _Counter:
    """A file that counts the bytes written to it."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass


def _workspace(folder: Path) -> Path:
    shutil.copytree(ROOT / "examples/wordstat", folder / "problems/wordstat")
    shutil.copytree(ROOT / "examples/wordstat/solutions/checkpoint_2", folder / "submission")
    return folder


def _remove(client: docker.DockerClient, built: set[str]) -> None:
    """Our tag, then every image the builds made that no tag names (never the base's)."""
    with contextlib.suppress(ImageNotFound):
        client.images.remove(TAG)
    for image_id in built:
        with contextlib.suppress(ImageNotFound, APIError):  # gone, or a parent of another
            if not client.images.get(image_id).tags:
                client.images.remove(image_id)


def _row(label: str, values: list[float]) -> str:
    return f"{label:<58}{statistics.median(values):>8.1f}{min(values):>8.1f}{max(values):>8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-image", default="python:3.12-slim")
    parser.add_argument("--test-image", default="ghcr.io/astral-sh/uv:python3.12-bookworm-slim")
    parser.add_argument("--dockerfile", type=Path, default=ROOT / "Dockerfile")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    client = docker.from_env(timeout=600)
    built: set[str] = set()
    builds, first_lines, first_tests, ends = [], [], [], []
    try:
        with tempfile.TemporaryDirectory() as temp:
            workspace = _workspace(Path(temp))
            for _ in range(args.repeat):
                builds.append(build(client, args.base_image, args.dockerfile.resolve(), built))
                first_line, first_test, end = run_to_first_test(client, args.test_image, workspace)
                first_lines.append(first_line)
                first_tests.append(first_test)
                ends.append(end)
                shutil.rmtree(workspace / ".scbench", ignore_errors=True)
        size, base_size, compressed = sizes(client, args.base_image)
    finally:
        _remove(client, built)
        client.close()

    mb = 1_000_000
    print(f"Dockerfile: {args.dockerfile}, base: {args.base_image}, repeats: {args.repeat}")
    print(
        f"image: {size / mb:.1f} MB ({(size - base_size) / mb:.1f} MB over the base's "
        f"{base_size / mb:.1f} MB); saved and gzip-compressed: {compressed / mb:.1f} MB"
    )
    print(f"{'seconds':<58}{'median':>8}{'min':>8}{'max':>8}")
    print(_row("prebuilt: docker run -> the action's first line", first_lines))
    print(_row("prebuilt: docker run -> first test", first_tests))
    print(_row("prebuilt: docker run -> the action's end", ends))
    print(_row("from the Dockerfile: build (no cache)", builds))
    build_first = [b + t for b, t in zip(builds, first_tests, strict=True)]
    print(_row("from the Dockerfile: build, then docker run -> first test", build_first))


if __name__ == "__main__":
    main()
