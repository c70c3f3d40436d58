"""`scbench-ci cleanup`: list what runs of this machine left behind on the Docker daemon, and
remove it with --yes (found by label)."""

from __future__ import annotations

import argparse

from scbench_ci.cli.arguments import add_option, given
from scbench_ci.executors.processes import MACHINE_LABEL, OWNER_LABEL
from scbench_ci.options import CleanupOptions
from scbench_ci.options.declared import CLEANUP, EVERYTHING, OWNER, UNUSED_FOR, VOLUMES, YES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        f"Each run's containers, volumes and networks name their owner ({OWNER_LABEL}="
        f"HOST/PID, the scbench-ci process that made them) and its machine ({MACHINE_LABEL}). "
        "By default only this machine's are looked at, and those of runs still in progress "
        "(their owner is a running process here) stay. Nothing is removed without --yes."
    )
    for option in (YES, VOLUMES, UNUSED_FOR):
        add_option(parser, option)
    which = parser.add_mutually_exclusive_group()
    for option in (OWNER, EVERYTHING):
        add_option(which, option)


def options(args: argparse.Namespace) -> CleanupOptions:
    return CleanupOptions(**given(args, CleanupOptions, CLEANUP))


def run(args: argparse.Namespace) -> int:
    from scbench_ci.commands.cleanup import run_cleanup

    return run_cleanup(options(args))
