"""What an image holds, read once per image id by a throwaway container: the PATH a login shell
of the tests user has there (SCBench runs its tests through `bash -l`, whose profile sets PATH),
the versions of Python, Node, npm, g++, rustc and cargo on it and which of the programs of
SCBench's images (image_recipe.PROGRAMS) it has, for results.json; and where the standard library
of its `python3` is (its bytecode is cached: cache_build.build_stdlib).

What the container printed is kept in the labels of a volume named by the image's id (an image
id names its content, so this never goes stale; `cleanup --volumes` removes it with the other
caches), so that later processes on the daemon read it in one call instead of starting a
container; it is parsed by the same rules either way."""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass, field

import docker
import requests
from docker.errors import DockerException

from scbench_ci.executors.docker.container import build_name, helper_container, labels
from scbench_ci.executors.docker.container_layout import CONTAINER_PATH, HOME_DIR, TEST_USER
from scbench_ci.executors.docker.image_recipe import PROGRAMS
from scbench_ci.executors.docker.labels import CACHE_LABEL

TOOLS = (
    ("python", "python3"),
    ("node", "node"),
    ("npm", "npm"),
    ("g++", "g++"),
    ("rustc", "rustc"),
    ("cargo", "cargo"),
)
_LONGEST = 200
VERSIONS = "versions"
"""The kind of cache volume (CACHE_LABEL's value) that keeps an image's probe output."""
PROBE_FORMAT = "3"
"""Part of the kept output's volume name: change it when the probe prints something new."""
IMAGE_LABEL = "dev.scbench-ci.cache.image"
OUTPUT_LABEL = "dev.scbench-ci.cache.output"
_KEPT_BYTES = 8192
_PATH = re.compile(r"/[A-Za-z0-9._+/-]*(:/[A-Za-z0-9._+/-]*)*")
_STDLIB = re.compile(r"/(usr|opt)(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)+/python3\.[0-9]{1,3}")
"""A standard library's folder: `python3.Y` at least two folders down in /usr or /opt (Debian's,
the python images', a Python built into /opt); never a system folder itself, nor the evaluator's
folders, the workspace or a home (a run mounts its cached copy there)."""
# The login shell's PATH first (and the tools found on it), then each tool's first line of
# `--version`, as name=line; a tool the image lacks is left out; then python3's stdlib folder;
# then `has=name` for each program the image has (found on that PATH or in the sbin folders);
# last, `probed=done`: without it, which programs the image has is not known.
_PROBE = (
    "if command -v bash >/dev/null 2>&1; then "
    'login=$(bash -lc \'printf %s "$PATH"\' </dev/null 2>/dev/null) && [ -n "$login" ] '
    '&& PATH=$login && printf "PATH=%s\\n" "$login"; fi; '
    + "".join(
        f'command -v {command} >/dev/null 2>&1 && printf "{name}=%s\\n" '
        f'"$({command} --version 2>&1 | head -n 1)"; '
        for name, command in TOOLS
    )
    + 'command -v python3 >/dev/null 2>&1 && printf "stdlib=%s\\n" '
    + '"$(python3 -c \'import sysconfig; print(sysconfig.get_path("stdlib"))\' 2>/dev/null)"; '
    + 'PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"; '
    + "".join(
        f'( {program.check} ) >/dev/null 2>&1 && printf "has=%s\\n" {program.name}; '
        for program in PROGRAMS
    )
    + 'printf "probed=%s\\n" done'
)


@dataclass(frozen=True)
class ImageFacts:
    path: str
    """The login shell's PATH for the tests user, else the image's own."""
    versions: dict[str, str] = field(default_factory=dict)
    stdlib: str | None = None
    """The standard library's folder of the login shell's `python3`, when it looks like one."""
    programs: frozenset[str] | None = None
    """The names of the programs of image_recipe.PROGRAMS the image has; None when the probe
    did not finish (nothing is known)."""


_known: dict[str, ImageFacts] = {}
_probing = threading.Lock()


def image_facts(client: docker.DockerClient, image_id: str, path: str) -> ImageFacts:
    """What the image holds (cached by its id); `path` is the image's own PATH, which stands when
    no login shell gives one. The image is untrusted: what it prints is cut to one short
    printable line per tool, and a PATH is taken only as a list of absolute paths."""
    with _probing:
        if image_id not in _known:
            text = _kept(client, image_id)
            if text is None:
                text = _probe(client, image_id, path)
                _keep(client, image_id, text)
            _known[image_id] = _parsed(text, path)
        return _known[image_id]


def image_path(client: docker.DockerClient, reference: str) -> str:
    """The PATH the image sets, else the usual one."""
    for variable in client.images.get(reference).attrs.get("Config", {}).get("Env") or []:
        name, _, value = str(variable).partition("=")
        if name == "PATH" and value:
            return value
    return CONTAINER_PATH


def _volume_name(image_id: str) -> str:
    return f"scbench-ci-cache-{VERSIONS}{PROBE_FORMAT}-{image_id.removeprefix('sha256:')[:40]}"


def _kept(client: docker.DockerClient, image_id: str) -> str | None:
    """The probe's output kept for this image, if a volume of ours holds it."""
    with contextlib.suppress(DockerException, requests.RequestException):
        found = client.volumes.get(_volume_name(image_id)).attrs.get("Labels") or {}
        if found.get(CACHE_LABEL) == VERSIONS and found.get(IMAGE_LABEL) == image_id:
            return str(found.get(OUTPUT_LABEL, ""))[:_KEPT_BYTES]
    return None


def _keep(client: docker.DockerClient, image_id: str, text: str) -> None:
    """Keep the probe's output for later processes; nothing when the probe failed (no output)."""
    if not text:
        return
    with contextlib.suppress(DockerException, requests.RequestException):
        client.volumes.create(
            _volume_name(image_id),
            driver="local",
            labels={
                CACHE_LABEL: VERSIONS,
                IMAGE_LABEL: image_id,
                OUTPUT_LABEL: text[:_KEPT_BYTES],
            },
        )


def _probe(client: docker.DockerClient, image_id: str, path: str) -> str:
    name = build_name(f"versions-{threading.get_ident()}-{image_id[7:19]}")
    with contextlib.suppress(DockerException, requests.RequestException):
        with helper_container(
            client,
            name,
            image=image_id,
            command=["/bin/sh", "-c", _PROBE],
            entrypoint=[],
            labels=labels("versions"),
            user=TEST_USER,
            environment={"HOME": HOME_DIR, "PATH": path},
            network_mode="none",
            working_dir="/tmp",
            mem_limit="1g",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
        ) as container:
            container.start()
            container.wait()
            output = container.logs(stdout=True, stderr=False)
        return bytes(output).decode(errors="replace")
    return ""


def _parsed(text: str, path: str) -> ImageFacts:
    wanted = {name for name, _ in TOOLS}
    known = {program.name for program in PROGRAMS}
    versions = {}
    stdlib = None
    programs = set()
    probed = False
    for line in text.splitlines():
        name, _, value = line.partition("=")
        if name == "has" and value in known:
            programs.add(value)
        probed = probed or line == "probed=done"
        if name == "PATH" and _PATH.fullmatch(value) and len(value) <= 4096:
            path = value
        if name == "stdlib" and _STDLIB.fullmatch(value) and len(value) <= 256:
            stdlib = value
        value = "".join(c for c in value if c.isprintable()).strip()[:_LONGEST]
        if name in wanted and value:
            versions[name] = value
    return ImageFacts(path, versions, stdlib, frozenset(programs) if probed else None)
