"""`cleanup`: what the runs of this machine left on the Docker daemon, listed, and removed with
`--yes` (found by label)."""

from __future__ import annotations

from collections.abc import Callable

from scbench_ci.foundation.errors import ExitCode
from scbench_ci.options import CleanupOptions
from scbench_ci.trust.terminal import inert


def _said(line: str) -> None:
    print(inert(line, one_line=True))


def run_cleanup(options: CleanupOptions, say: Callable[[str], None] = _said) -> ExitCode:
    """What runs left behind, listed or removed as `executors.docker.cleanup.remove_leftovers`
    says."""
    from scbench_ci.executors.docker.cleanup import remove_leftovers

    remove_leftovers(
        owner=options.owner,
        everything=options.everything,
        volumes=options.volumes,
        unused_for_s=options.unused_for_s,
        remove=options.yes,
        say=say,
    )
    return ExitCode.PASSED
