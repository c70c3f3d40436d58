"""The Docker executor's settings: the image and the container's limits, as one value, and what
they say to the rest of a run (the Docker backend's entry in `executors/choice.py`).

Each field is an option's declaration (`executors/settings.Setting`: its CLI flag, its action
input, its API keyword, the parser of their text), so a new limit is one field here: the CLI's
flags (`cli/arguments.py`), the action's inputs and their defaults (`action/inputs.py`), the API's
keywords, the executor and the fingerprint of a run all read them from here
(`options/declared.py` lists them with every other option). Each value is parsed once, by the
front end that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from scbench_ci.executors.docker.image_recipe import DEFAULT_IMAGE, recipe_digest
from scbench_ci.executors.settings import fingerprinted_fields, setting
from scbench_ci.foundation.option_values import (
    BadValue,
    boolean,
    optional_text,
    positive_number,
    whole_number,
)
from scbench_ci.foundation.scbench_runner import ScbenchRunner

DEFAULT_MEMORY = "4g"
MIN_MEMORY_BYTES = 6 * 1024 * 1024
DEFAULT_CPUS = 2.0
DEFAULT_PIDS_LIMIT = 1024
DEFAULT_CACHE_SIZE = "10g"
DEFAULT_DISK = "auto"
"""`auto`: the run's folders are as large as the free space of the disk Docker keeps its data on,
as a workspace on that disk would be under SCBench; what is written there is memory, bounded by
the memory limit. A size caps them, and programs see that size."""


def size(option: str, value: str) -> str:
    """A size as Docker reads one (`512m`, `4g`), more than 0; kept as given."""
    if _bytes(value) <= 0:
        raise BadValue(option, f"not a size like 512m or 4g: {value!r}")
    return value


def _bytes(value: str) -> int:
    """The size in bytes as Docker reads it; 0 for what is no size. Docker's SDK is loaded here,
    when a value is read, not when the flags are made."""
    from docker.errors import DockerException
    from docker.utils import parse_bytes

    try:
        return int(parse_bytes(value))
    except DockerException:
        return 0


def memory(option: str, value: str) -> str:
    """A size, at least Docker's least memory limit (6 MiB): a bare `4` is 4 bytes, which no
    container can start in, so it is refused before anything runs."""
    size(option, value)
    if _bytes(value) < MIN_MEMORY_BYTES:
        hint = f" (did you mean {value}g?)" if value.isdigit() else ""
        raise BadValue(option, f"{value!r} is less than Docker's least memory limit, 6m{hint}")
    return value


def disk(option: str, value: str) -> str:
    """`auto`, or a size."""
    return value if value == DEFAULT_DISK else size(option, value)


_setting = partial(setting, group="docker executor")


@dataclass(frozen=True)
class DockerSettings:
    """In the order of the action's inputs (action.yml)."""

    image: str | None = _setting(
        "image",
        None,
        flag="--image",
        input="image",
        metavar="IMAGE",
        parse=optional_text,
        help="the image the tests run in, as it is (default: SCBench 1.0's evaluation image, "
        f"{DEFAULT_IMAGE}, the paper runner's under --scbench paper, or that runner's "
        "evaluation layer on the environment file's image; built here when it cannot be pulled)",
    )
    memory: str = _setting(
        "memory",
        DEFAULT_MEMORY,
        flag="--memory",
        input="memory",
        metavar="SIZE",
        parse=memory,
        help="memory limit, no swap (default: %(default)s)",
    )
    cpus: float = _setting(
        "cpus",
        DEFAULT_CPUS,
        flag="--cpus",
        input="cpus",
        metavar="N",
        parse=partial(positive_number, what="a number of CPUs"),
        help="CPU limit (default: %(default)g)",
    )
    pids_limit: int = _setting(
        "pids_limit",
        DEFAULT_PIDS_LIMIT,
        flag="--pids-limit",
        input="pids_limit",
        metavar="N",
        parse=partial(whole_number, least=1),
        help="process limit (default: %(default)s)",
    )
    disk: str = _setting(
        "disk",
        DEFAULT_DISK,
        flag="--disk",
        input="disk",
        metavar="SIZE|auto",
        parse=disk,
        help="space for the workspace, and again for /tmp: auto is the free space of Docker's "
        "disk, as SCBench's tests see it; in memory, so what is written counts toward --memory "
        "(default: %(default)s)",
    )
    use_cache: bool = _setting(
        "use_cache",
        True,
        flag="--no-cache",
        input="cache",
        parse=boolean,
        help="do not use the cached environments: the test runner is installed, and the setup "
        "run, in every run",
        # The same environments as a run without them would install: the result is the same.
        fingerprinted=False,
    )
    cache_size: str = _setting(
        "cache_size",
        DEFAULT_CACHE_SIZE,
        flag="--cache-size",
        input="cache_size",
        metavar="SIZE",
        parse=size,
        help="the most the cached environments may take on the Docker daemon, all runs' "
        "together (and at most 100 of them): once a build makes them more, the least recently "
        "used are removed, never one a run uses (default: %(default)s)",
        # Which environments are kept decides only what is built again, never a result.
        fingerprinted=False,
    )
    test_network: bool = _setting(
        "test_network",
        True,
        flag="--no-test-network",
        input="test_network",
        parse=boolean,
        help="cut the network after setup, so the tests have loopback only (default: the tests "
        "keep it, as SCBench's do)",
    )

    def fingerprinted(self, executor: str, scbench: ScbenchRunner) -> dict[str, object]:
        """What makes two runs' results comparable: the limits, and the recipe of the image
        built when none is named (a changed one is another image)."""
        return {
            "executor": {"executor": executor, **fingerprinted_fields(self)},
            "recipe": recipe_digest(scbench.image_recipe),
        }

    def can_cut_network(self) -> bool:
        """The container's network is cut after setup on request, unless the tests never have
        it (`--no-test-network`)."""
        return self.test_network

    def cluster_cpus(self) -> float:
        """A Ray cluster's nodes run Docker executors: each task asks for `--cpus`."""
        return self.cpus
