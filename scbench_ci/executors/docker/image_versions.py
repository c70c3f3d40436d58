"""What an image holds: the versions of Python, Node, npm, g++, rustc and cargo in it, read once
per image id by a throwaway container, for results.json's record of what ran."""

from __future__ import annotations

import contextlib
import threading

import docker
import requests
from docker.errors import DockerException

from scbench_ci.executors.docker.container import build_name, labels
from scbench_ci.executors.docker.layout import TEST_USER

TOOLS = (
    ("python", "python3"),
    ("node", "node"),
    ("npm", "npm"),
    ("g++", "g++"),
    ("rustc", "rustc"),
    ("cargo", "cargo"),
)
_LONGEST = 200
# Each tool's first line of `--version`, as name=line; a tool the image lacks is left out.
_PROBE = (
    "".join(
        f'command -v {command} >/dev/null 2>&1 && printf "{name}=%s\\n" '
        f'"$({command} --version 2>&1 | head -n 1)"; '
        for name, command in TOOLS
    )
    + "true"
)
_known: dict[str, dict[str, str]] = {}
_probing = threading.Lock()


def image_versions(client: docker.DockerClient, image_id: str, path: str) -> dict[str, str]:
    """The tools' versions in the image (cached by its id): `{}` when they cannot be read. The
    image is untrusted: what it prints is cut to one short printable line per tool."""
    with _probing:
        if image_id not in _known:
            _known[image_id] = _probe(client, image_id, path)
        return dict(_known[image_id])


def _probe(client: docker.DockerClient, image_id: str, path: str) -> dict[str, str]:
    name = build_name(f"versions-{threading.get_ident()}-{image_id[7:19]}")
    with contextlib.suppress(DockerException, requests.RequestException):
        try:
            output = client.containers.run(
                image_id,
                ["/bin/sh", "-c", _PROBE],
                entrypoint=[],
                name=name,
                labels=labels("versions"),
                user=TEST_USER,
                environment={"HOME": "/tmp", "PATH": path},
                network_mode="none",
                working_dir="/tmp",
                mem_limit="1g",
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                stdout=True,
                stderr=False,
            )
        finally:
            with contextlib.suppress(DockerException, requests.RequestException):
                client.api.remove_container(name, force=True)
        return _parsed(bytes(output).decode(errors="replace"))
    return {}


def _parsed(text: str) -> dict[str, str]:
    wanted = {name for name, _ in TOOLS}
    versions = {}
    for line in text.splitlines():
        name, _, version = line.partition("=")
        version = "".join(c for c in version if c.isprintable()).strip()[:_LONGEST]
        if name in wanted and version:
            versions[name] = version
    return versions
