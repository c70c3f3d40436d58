"""`cleanup`: remove the containers and volumes scbench-ci runs left behind (found by label)."""

from __future__ import annotations

from collections.abc import Callable

from scbench_ci.errors import ExitCode
from scbench_ci.options import CleanupOptions


def cleanup(options: CleanupOptions, say: Callable[[str], None] = print) -> ExitCode:
    """What runs left behind, removed as `executors.docker.cleanup.remove_leftovers` says."""
    from scbench_ci.executors.docker.cleanup import remove_leftovers

    remove_leftovers(
        owner=options.owner, everything=options.everything, volumes=options.volumes, say=say
    )
    return ExitCode.PASSED
