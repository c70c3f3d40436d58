"""`scbench-ci cleanup`: remove the containers and volumes scbench-ci runs left behind (found by
label)."""

from __future__ import annotations

import argparse

from scbench_ci.cli.arguments import add_option, given
from scbench_ci.executors.processes import OWNER_LABEL
from scbench_ci.options import CleanupOptions
from scbench_ci.options.declared import CLEANUP, EVERYTHING, OWNER, VOLUMES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        f"Each run's containers and volumes name their owner ({OWNER_LABEL}=HOST/PID, the "
        "scbench-ci process that made them). By default those of runs that may still be in "
        "progress stay: their owner is a running process of this host, or a process of another "
        "host. Those without an owner (older versions) are removed."
    )
    add_option(parser, VOLUMES)
    which = parser.add_mutually_exclusive_group()
    for option in (OWNER, EVERYTHING):
        add_option(which, option)


def options(args: argparse.Namespace) -> CleanupOptions:
    return CleanupOptions(**given(args, CleanupOptions, CLEANUP))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.cleanup import cleanup

    return cleanup(options(args))
