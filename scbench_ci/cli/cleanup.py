"""`scbench-ci cleanup`: remove the containers and volumes scbench-ci runs left behind (found by
label)."""

from __future__ import annotations

import argparse

from scbench_ci.cli.arguments import argument_type
from scbench_ci.commands.cleanup import cleanup, owner
from scbench_ci.executors.docker.labels import CACHE_LABEL, LEGACY_CACHE_VOLUME
from scbench_ci.executors.processes import OWNER_LABEL
from scbench_ci.options import CleanupOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        f"Each run's containers and volumes name their owner ({OWNER_LABEL}=HOST/PID, the "
        "scbench-ci process that made them). By default those of runs that may still be in "
        "progress stay: their owner is a running process of this host, or a process of another "
        "host. Those without an owner (older versions) are removed."
    )
    parser.add_argument(
        "--volumes",
        action="store_true",
        help=f"also remove the cached environments the runs share (label {CACHE_LABEL}) and "
        f"the uv cache volume of earlier versions ({LEGACY_CACHE_VOLUME}); run it when no "
        "evaluation is running",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--owner",
        metavar="HOST/PID",
        type=argument_type("--owner", owner),
        help="remove only what the scbench-ci process PID of host HOST made (its "
        f"{OWNER_LABEL} label), even while it runs",
    )
    which.add_argument(
        "--all",
        action="store_true",
        help="remove every run's containers and volumes, those of runs still in progress too",
    )


def options(args: argparse.Namespace) -> CleanupOptions:
    return CleanupOptions(volumes=args.volumes, owner=args.owner, everything=args.all)


def run(args: argparse.Namespace) -> int:
    return cleanup(options(args))
