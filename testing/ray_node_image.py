"""The image of the suite's container Ray node: this machine's Python (Ray refuses a node whose
Python differs in the patch version from the head's), Ray at the driver's exact version, and
scbench-ci from this checkout, so the node runs the code under test.

Built FROM the local test image (bookworm) on the real daemon, tagged by a hash of what goes in:
a change of the package's sources rebuilds only the last layer (seconds); Python and Ray sit in
the layers before it. Failing to build fails the tests, never skips them.

`python -m testing.ray_node_image` builds it ahead of a test run and prints its name.
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import docker
import pytest
import ray
from docker.errors import APIError, BuildError, ImageNotFound

from testing.images import TEST_IMAGE, build_log
from testing.paths import REPO_ROOT

REPOSITORY = "scbench-ci-ray-node"
HASH_LABEL = "dev.scbench-ci.ray-node.hash"
VENV = "/opt/ray-node"
"""Where the node's Ray and scbench-ci are installed in the image (its PATH starts there)."""
HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
"""The test image carries the host's bundle: pip in the build trusts the same proxy."""

PYTHON_HOME = Path(sys.base_prefix)
"""A self-contained (pyenv) install that links only bookworm's libraries: copied to the same path,
as its interpreter finds libpython by an absolute rpath."""
_PYTHON_LEFT_OUT = {"site-packages", "test", "idle_test", "__pycache__"}
"""Not needed to run Ray: the base's own packages (the venv has its own), the standard library's
tests, the bytecode (recompiled on first import)."""
_PACKAGE_FILES = ("pyproject.toml", "README.md", "scbench_ci")

_DOCKERFILE = f"""\
FROM {TEST_IMAGE}
ENV HOME=/root SSL_CERT_FILE={HOST_CA_BUNDLE} PIP_CERT={HOST_CA_BUNDLE} \\
    PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 RAY_USAGE_STATS_ENABLED=0
COPY python/ {PYTHON_HOME}/
RUN {PYTHON_HOME}/bin/python3 -m venv {VENV} && {VENV}/bin/pip install --quiet {{requirements}}
COPY package/ /tmp/scbench-ci/
RUN {VENV}/bin/pip install --quiet --no-deps --no-build-isolation /tmp/scbench-ci \\
    && rm -rf /tmp/scbench-ci
ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /root
"""


def node_image(client: docker.DockerClient, say: Callable[[str], None] = print) -> str:
    """The node image's name, built when missing (or stale: its tag is the hash of its inputs)."""
    context = _context()
    digest = hashlib.sha256(context).hexdigest()[:16]
    name = f"{REPOSITORY}:{digest}"
    try:
        client.images.get(name)
        return name
    except ImageNotFound:
        pass
    started = time.monotonic()
    try:
        client.images.build(
            fileobj=io.BytesIO(context),
            custom_context=True,
            tag=name,
            labels={HASH_LABEL: digest},
            rm=True,
            forcerm=True,
        )
    except BuildError as error:
        pytest.fail(
            f"the Ray node image did not build: {error.msg}\n{build_log(error)}", pytrace=False
        )
    except APIError as error:
        pytest.fail(f"the Ray node image did not build: {error}", pytrace=False)
    say(f"built {name} in {time.monotonic() - started:.1f} s")
    return name


def _requirements() -> list[str]:
    """Ray at the driver's version, the package's own dependencies and its build backend: all
    in the layer before the package, so a code change does not reinstall them."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    return [
        f"ray=={ray.__version__}",
        *project["project"]["dependencies"],
        *project["build-system"]["requires"],
    ]


def _context() -> bytes:
    """The build context as a tar archive; its bytes are also what the tag hashes (entries carry
    no times or owners, so the same inputs give the same archive)."""
    dockerfile = _DOCKERFILE.format(requirements=" ".join(f"'{r}'" for r in _requirements()))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        _add_bytes(archive, "Dockerfile", dockerfile.encode())
        _add_tree(archive, PYTHON_HOME, "python", _PYTHON_LEFT_OUT)
        for name in _PACKAGE_FILES:
            _add_tree(archive, REPO_ROOT / name, f"package/{name}", {"__pycache__"})
    return buffer.getvalue()


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    entry = tarfile.TarInfo(name)
    entry.size = len(data)
    entry.mode = 0o644
    archive.addfile(entry, io.BytesIO(data))


def _add_tree(archive: tarfile.TarFile, source: Path, name: str, left_out: set[str]) -> None:
    def normalized(entry: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if Path(entry.name).name in left_out:
            return None
        entry.mtime = 0
        entry.uid = entry.gid = 0
        entry.uname = entry.gname = ""
        return entry

    archive.add(source, arcname=name, filter=normalized)


if __name__ == "__main__":
    print(node_image(docker.from_env(timeout=600)))
