"""The evaluation images' names and recipes (their Dockerfiles), apart from the code that builds
them, which loads Docker's SDK: the options, the CLI's flags and a run's fingerprint need only
these.

Two recipes, one per SCBench runner, each its runner's `setup_base.docker.j2` transcribed: `1.0`
(SCBench 1.0, the default) and `paper` (the paper's runner, January 2026). Each names the programs
its image holds that a problem's tests may look for, so that a run can say which ones the image
it ran in lacks, and what that changes."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import resources

from scbench_ci.executors.base import MissingProgram
from scbench_ci.foundation.scbench_runner import V1_0

PUBLISHED_IMAGE = "ghcr.io/scbench/evaluate-env:python3.12"
EVALUATION_IMAGE = os.environ.get("SCBENCH_EVALUATION_IMAGE") or PUBLISHED_IMAGE
"""SCBench 1.0's evaluation image as the release workflow publishes it, and the stem of the other
recipes' names; SCBENCH_EVALUATION_IMAGE names another (the action's image sets it to the name its
release published)."""
SCBENCH_BASE = "ghcr.io/astral-sh/uv:python3.12-trixie-slim"
"""`docker.image` of SCBench's standard environment (configs/environments/
docker-python3.12-uv.yaml), under both runners: the base of the default images."""


@dataclass(frozen=True)
class Program:
    """A program a recipe's image holds that a problem's tests may look for."""

    name: str
    """As results.json names it."""
    check: str
    """A shell condition, true when the image has it (run with the tests user's login PATH and
    the system's sbin folders: rabbitmq-server is in /usr/sbin)."""
    without: str
    """What a test sees when the image lacks it."""

    def missing(self) -> MissingProgram:
        return MissingProgram(self.name, self.without)


def _command(name: str, without: str) -> Program:
    return Program(name, f"command -v {name}", without)


_TOOLCHAINS = (
    _command("node", "a test that runs JavaScript cannot"),
    _command("npm", "a test that installs or runs npm packages cannot"),
    _command("npx", "a test that runs npm packages through npx cannot"),
    _command("g++", "a test that compiles C or C++ cannot"),
    _command("cargo", "a test that builds Rust crates cannot"),
    _command("rustc", "a test that compiles Rust cannot"),
)
_SCBENCH_1_0 = (
    _command("java", "a test that runs Java programs cannot"),
    _command("nc", "a test that uses netcat (nc) cannot"),
    _command("protoc", "a test that compiles .proto files with protoc cannot"),
    _command("git", "a test that runs git cannot"),
    _command("dot", "a test that renders Graphviz graphs (dot) cannot"),
    _command(
        "redis-server",
        "a test that starts a Redis server cannot: it skips or fails (a skipped Core test fails "
        "core-cases)",
    ),
    _command(
        "rabbitmq-server",
        "a test that starts a RabbitMQ server cannot: it skips or fails (a skipped Core test "
        "fails core-cases)",
    ),
    _command(
        "docker", "a test that runs the Docker client cannot (it reaches no daemon either way)"
    ),
    Program(
        "docker-compose",
        "command -v docker-compose || [ -x /usr/libexec/docker/cli-plugins/docker-compose ]",
        "a test that runs Docker Compose cannot (it reaches no daemon either way)",
    ),
    Program(
        "chromium-libraries",
        "for l in libnss3.so libgbm.so.1 libgtk-3.so.0 libasound.so.2 libxkbcommon.so.0; do "
        'ls /usr/lib/*/"$l" >/dev/null 2>&1 || exit 1; done',
        "a test that starts a headless Chromium (Playwright's, Puppeteer's) cannot",
    ),
    _command(
        "minio",
        "a test that starts a MinIO server (S3 object storage) cannot: it skips or fails",
    ),
)


@dataclass(frozen=True)
class Recipe:
    """An evaluation image's recipe: a Dockerfile of scbench_ci/images on a base."""

    name: str
    """The runner whose image it is: `1.0` or `paper`."""
    dockerfile_name: str
    tag_suffix: str
    """What its published name adds to EVALUATION_IMAGE."""
    title: str
    """The runner's name in a sentence."""
    programs: tuple[Program, ...]

    @property
    def published(self) -> str:
        return EVALUATION_IMAGE + self.tag_suffix

    def dockerfile(self) -> bytes:
        return (resources.files("scbench_ci") / "images" / self.dockerfile_name).read_bytes()

    def digest(self) -> str:
        """The Dockerfile's digest: what a run of the default image or an environment file's
        base depends on besides the base."""
        return hashlib.sha256(self.dockerfile()).hexdigest()

    def missing(self, present: frozenset[str] | None) -> tuple[MissingProgram, ...]:
        """The programs of this recipe's image that an image holding `present` lacks (None: not
        known, so none is named)."""
        if present is None:
            return ()
        return tuple(program.missing() for program in self.programs if program.name not in present)


RECIPES = {
    "1.0": Recipe(
        "1.0", "evaluation-1.0.Dockerfile", "", "SCBench 1.0", _TOOLCHAINS + _SCBENCH_1_0
    ),
    "paper": Recipe(
        "paper", "evaluation-paper.Dockerfile", "-paper", "SCBench's paper runner", _TOOLCHAINS
    ),
}
DEFAULT_RECIPE = V1_0.image_recipe
DEFAULT_IMAGE = RECIPES[DEFAULT_RECIPE].published
PROGRAMS = tuple({p.name: p for recipe in RECIPES.values() for p in recipe.programs}.values())
"""Every recipe's programs, once each: what an image is probed for."""


def recipe(name: str = DEFAULT_RECIPE) -> Recipe:
    return RECIPES[name]


def recipe_digest(name: str = DEFAULT_RECIPE) -> str:
    """The digest of the recipe `name`'s Dockerfile (see Recipe.digest)."""
    return recipe(name).digest()
