"""SCBench's evaluation images: its environment's base plus the layer SCBench's runner builds on
it (`setup_base.docker.j2`), as each runner has it: SCBench 1.0's (the default) and the paper
runner's, transcribed in scbench_ci/images (image_recipe.RECIPES).

The default image of a recipe is its layer on SCBench's standard base, published under the
recipe's name; where it cannot be pulled it is built here, once, and reused: a local build is
tagged with the key of what it was built from (the recipe's Dockerfile's bytes, the base's name
and id), so a changed recipe or base builds again and nothing else does, and the two recipes'
builds never share a tag. An environment file's `docker.image` is a base too, as in SCBench. The
build fetches Node through nvm and Rust through rustup, as SCBench's does; where those hosts
cannot be reached it takes the nearest packages of the package registries (Node 22 from the npm
registry, Rust from Debian) and says so, in its output and in the image's labels. What an image
still lacks of its recipe's programs (MinIO's server, where its host cannot be reached), the
probe of the image finds (image_versions) and results.json names.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import tarfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TextIO

import docker
import requests
from docker.errors import DockerException, ImageNotFound

from scbench_ci.executors.docker.daemon import ensure_image, reason, say
from scbench_ci.executors.docker.image_recipe import SCBENCH_BASE, Recipe
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.trust.terminal import terminal_text

LOCAL_REPOSITORY = "scbench-ci-evaluation"
"""Where local builds are tagged, by their key."""
TOOLCHAINS_LABEL = "dev.scbench-ci.toolchains"
BASE_LABEL = "dev.scbench-ci.base"
Toolchains = Literal["upstream", "registries"]
TOOLCHAINS: tuple[Toolchains, ...] = ("upstream", "registries")
REGISTRIES_NOTE = (
    "built here without nvm's and rustup's hosts: Node 22 from the npm registry, Rust and "
    "cargo from Debian's packages, the base as this machine has it"
)


@dataclass(frozen=True)
class EvaluationImage:
    """The image a run uses, and how it came to be here."""

    name: str
    """As asked for (the default, `--image`, or the environment file's base)."""
    reference: str
    """What the containers are made from: the name, or a local build's tag."""
    id: str
    built_from: str | None = None
    """The base, when SCBench's layer was built on it here."""
    toolchains: str | None = None
    """`upstream` or `registries`, when the image says (its label)."""

    @property
    def note(self) -> str | None:
        """What a user must know about where the image's toolchains came from."""
        return REGISTRIES_NOTE if self.toolchains == "registries" else None


def default_here(client: docker.DockerClient, recipe: Recipe) -> EvaluationImage | None:
    """The recipe's published image if it is here, else a local build of it on the base that
    is here."""
    with contextlib.suppress(ImageNotFound):
        return _described(client, recipe.published, recipe.published, None)
    with contextlib.suppress(ImageNotFound):
        tag = local_tag(recipe, SCBENCH_BASE, str(client.images.get(SCBENCH_BASE).id))
        return _described(client, recipe.published, tag, SCBENCH_BASE)
    return None


def default_image(
    client: docker.DockerClient, echo: TextIO | None, recipe: Recipe
) -> EvaluationImage:
    """The recipe's published image: here already, else a local build of it, else pulled, else
    built."""
    here = default_here(client, recipe)
    if here is not None:
        return here
    try:
        ensure_image(client, recipe.published, echo)
        return _described(client, recipe.published, recipe.published, None)
    except InfrastructureError as error:
        say(echo, f"{error}: building it here from scbench-ci's recipe instead")
    return on_base(client, SCBENCH_BASE, echo, recipe, name=recipe.published)


def on_base(
    client: docker.DockerClient,
    base: str,
    echo: TextIO | None,
    recipe: Recipe,
    *,
    name: str | None = None,
) -> EvaluationImage:
    """The recipe's layer on `base` (pulled if it is not here), built once for this recipe and
    base and reused after."""
    base_id = ensure_image(client, base, echo)
    tag = local_tag(recipe, base, base_id)
    with contextlib.suppress(ImageNotFound):
        return _described(client, name or base, tag, base)
    chosen = os.environ.get("SCBENCH_IMAGE_TOOLCHAINS")
    toolchains = [each for each in TOOLCHAINS if chosen in (None, "", each)]
    failures = []
    for each in toolchains:
        started = time.monotonic()
        say(
            echo,
            f"building {tag}: {recipe.title}'s evaluation layer on {base} (toolchains: {each}) ...",
        )
        failure = _build(client, tag, base, each, echo, recipe)
        if failure is None:
            say(echo, f"built {tag} in {time.monotonic() - started:.0f}s")
            built = _described(client, name or base, tag, base)
            if built.note:
                say(echo, f"note: {tag} was {built.note}")
            return built
        failures.append(f"with toolchains {each}: {failure}")
        say(echo, f"the build with toolchains {each} failed: {failure}")
    raise InfrastructureError(
        f"could not build {recipe.title}'s evaluation image on {base}: {'; '.join(failures)}; "
        "build it yourself, or pass --image"
    )


def local_tag(recipe: Recipe, base: str, base_id: str) -> str:
    key = hashlib.sha256(recipe.dockerfile() + b"\0" + base.encode() + b"\0" + base_id.encode())
    return f"{LOCAL_REPOSITORY}:{key.hexdigest()[:16]}"


def _described(
    client: docker.DockerClient, name: str, reference: str, built_from: str | None
) -> EvaluationImage:
    image = client.images.get(reference)
    labels = image.labels or {}
    return EvaluationImage(
        name=name,
        reference=reference,
        id=str(image.id),
        built_from=built_from,
        toolchains=labels.get(TOOLCHAINS_LABEL),
    )


def _build(
    client: docker.DockerClient,
    tag: str,
    base: str,
    toolchains: Toolchains,
    echo: TextIO | None,
    recipe: Recipe,
) -> str | None:
    """Build through the SDK; None when it worked, else the build's last error line."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        data = recipe.dockerfile()
        entry = tarfile.TarInfo("Dockerfile")
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    context.seek(0)
    try:
        events = client.api.build(
            fileobj=context,
            custom_context=True,
            tag=tag,
            buildargs={"BASE": base, "TOOLCHAINS": toolchains},
            labels={BASE_LABEL: base},
            rm=True,
            forcerm=True,
            decode=True,
        )
        return _follow(events, echo)
    except (DockerException, requests.RequestException) as error:
        return reason(error)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _follow(events: Iterable[Mapping[str, Any]], echo: TextIO | None) -> str | None:
    """Show the steps as they start; the error, if the build reports one."""
    last: list[str] = []
    for event in events:
        if "error" in event:
            detail = " | ".join(last[-3:])
            failed: str = terminal_text(_ANSI.sub("", str(event["error"])).strip())
            if failed.startswith("The command "):  # the step's whole script, already shown
                failed = failed[failed.rfind("returned") :]
            return f"{failed} ({detail})" if detail else failed
        # What the base's programs print is the base's: shown as inert text.
        line = terminal_text(_ANSI.sub("", str(event.get("stream") or "")), kept="\n")
        if line.startswith("Step "):
            say(echo, f"  {line.strip()}")
        if line.strip() and not line.startswith(("Step ", " ---> ", "Removing intermediate")):
            last.append(line.strip())
            del last[:-20]
    return None
