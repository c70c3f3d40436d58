"""What the CLI's commands share: flags (the Docker executor's made from DockerSettings), argument
types made of the option parsers, and the terminal's side of the cores' channels."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast

from scbench_ci.commands.channels import BaselineSource, Echo
from scbench_ci.executors.choice import DEFAULT_EXECUTOR, EXECUTOR_NAMES, executor_name
from scbench_ci.executors.docker.settings import DockerSettings, settings
from scbench_ci.option_values import BadValue, seconds, whole_number
from scbench_ci.options import (
    DEFAULT_RAY_ADDRESS,
    DEFAULT_SESSION_TIMEOUT_S,
    ENGINES,
    ray_address,
)
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, FAIL_ON, FAIL_ON_HELP
from scbench_ci.outputs.github.workflow import commands_stopped
from scbench_ci.outputs.summary_view import DEFAULT_DETAILS, DETAILS, DETAILS_HELP
from scbench_ci.results.baseline import load_baseline
from scbench_ci.results.history import DEFAULT_WINDOW, MAX_WINDOW
from scbench_ci.trust.terminal import terminal_text

Value = TypeVar("Value")


def argument_type(flag: str, parse: Callable[[str, str], Value]) -> Callable[[str], Value]:
    """An argparse type of an option parser: argparse shows the reason after its own
    `argument <flag>:`."""

    def convert(text: str) -> Value:
        try:
            return parse(flag, text)
        except BadValue as error:
            raise argparse.ArgumentTypeError(error.reason) from None

    return convert


def at_least(flag: str, least: int) -> Callable[[str], int]:
    return argument_type(flag, partial(whole_number, least=least))


def take_pytest_arguments(parser: argparse.ArgumentParser) -> None:
    """Says that what follows `--` goes to pytest (`cli/main.py` splits it off before parsing);
    added last, so the usage line holds every flag before it."""
    usage = parser.format_usage().removeprefix("usage: ").rstrip()
    parser.usage = f"{usage} [-- PYTEST ARGS]"
    parser.epilog = (
        "Whatever follows `--` is given to pytest as it is, after the run's own arguments "
        "(-- -k 'parse and not slow' -x)."
    )


def add_problem_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--problem",
        required=True,
        action="append",
        type=Path,
        metavar="DIR",
        help="a problem folder (holds config.yaml and tests/), or a folder of problem folders "
        "(a repository's problems/) for every problem in it; may be repeated",
    )


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How the tests run (the flags `evaluate` and `check` share): see `run_options`."""
    parser.add_argument(
        "--entrypoint",
        metavar="CMD",
        help="the command that runs the submission (default: from the environment)",
    )
    parser.add_argument(
        "--environment",
        type=Path,
        metavar="FILE",
        help="an SCBench environment YAML (setup commands, command, entry file)",
    )
    parser.add_argument(
        "--executor",
        default=DEFAULT_EXECUTOR,
        type=argument_type("--executor", executor_name),
        choices=EXECUTOR_NAMES,
        help="where the tests run: docker (a container with limits; no daemon is exit 3, never a "
        "run on the host) or local (this machine, as you, WITHOUT ISOLATION: only for code you "
        "trust) (default: %(default)s)",
    )
    cluster = parser.add_argument_group("where the runs take place")
    cluster.add_argument(
        "--engine",
        default="local",
        choices=ENGINES,
        help="local: this machine, --jobs side by side; ray: each run a task on a Ray cluster, "
        "run by the Docker executor of the node it lands on (needs scbench-ci[ray]) "
        "(default: %(default)s)",
    )
    cluster.add_argument(
        "--ray-address",
        default=DEFAULT_RAY_ADDRESS,
        type=argument_type("--ray-address", ray_address),
        metavar="ADDRESS",
        help="the Ray cluster to join with --engine ray: HOST:PORT of its head, or auto (the "
        "cluster this machine is a node of, or RAY_ADDRESS) (default: %(default)s)",
    )
    container = parser.add_argument_group("docker executor")
    defaults = DockerSettings()
    for name, setting in settings():
        default = getattr(defaults, name)
        if setting.metavar is None:
            switch = "store_false" if default else "store_true"
            container.add_argument(setting.flag, dest=name, action=switch, help=setting.help)
        else:
            container.add_argument(
                setting.flag,
                dest=name,
                type=argument_type(setting.flag, setting.parse),
                default=default,
                metavar=setting.metavar,
                help=setting.help,
            )
    parser.add_argument(
        "--timeout",
        type=argument_type("--timeout", seconds),
        metavar="S",
        help="per-test timeout (default: the checkpoint's, the problem's, or 30)",
    )
    parser.add_argument(
        "--session-timeout",
        type=argument_type("--session-timeout", seconds),
        default=DEFAULT_SESSION_TIMEOUT_S,
        metavar="S",
        help="wall-clock limit for the whole run of one checkpoint (default: %(default)g)",
    )


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The EvaluationOptions fields `add_run_arguments`' flags give."""
    return {
        "entrypoint": args.entrypoint,
        "environment": args.environment,
        "executor": args.executor,
        "engine": args.engine,
        "ray_address": args.ray_address,
        "docker": DockerSettings(**{name: getattr(args, name) for name, _ in settings()}),
        "test_timeout_s": args.timeout,
        "session_timeout_s": args.session_timeout,
    }


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags `evaluate` and `merge` share: the baseline, what fails the run, and how much
    the summary details."""
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="PATH",
        help="an earlier run's results.json, or a folder holding one: list the tests that "
        "regressed, were fixed, are new or were removed since",
    )
    parser.add_argument(
        "--fail-on",
        default=DEFAULT_FAIL_ON,
        choices=FAIL_ON,
        help=f"what makes the exit code 1: {FAIL_ON_HELP} (default: %(default)s)",
    )
    parser.add_argument(
        "--history",
        type=argument_type("--history", partial(whole_number, most=MAX_WINDOW)),
        default=DEFAULT_WINDOW,
        metavar="N",
        help="how many runs results.json's history keeps, this one included, carried forward "
        f"from the baseline's; the summary charts them (0: no history; at most {MAX_WINDOW}; "
        "default: %(default)s)",
    )
    add_details_argument(parser)


def add_details_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--details",
        default=DEFAULT_DETAILS,
        choices=DETAILS,
        help=f"{DETAILS_HELP} (default: %(default)s)",
    )


def baseline_file(path: Path | None) -> BaselineSource:
    """The `--baseline` file or folder, read when the core asks for it."""
    return lambda: load_baseline(path) if path is not None else None


class LineTrackingStdout:
    """`sys.stdout` (whichever it is when written), knowing whether its last write left a line
    open (a test's output cut by Ctrl-C, a live status line), so that what comes after starts
    on a line of its own."""

    line_open = False

    def write(self, text: str) -> int:
        if text:
            self.line_open = not text.endswith("\n")
        return sys.stdout.write(text)

    def end_line(self) -> None:
        if self.line_open:
            self.write("\n")
            sys.stdout.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)


STDOUT = LineTrackingStdout()
"""The runs' output as the CLI writes it; `end_line` before a message that ends the run."""


def terminal(quiet: bool) -> Echo:
    """The tests' output streamed to stdout, unless quiet."""

    @contextlib.contextmanager
    def opened() -> Iterator[TextIO | None]:
        if quiet:
            yield None
            return
        stream = cast(TextIO, STDOUT)
        # In a workflow step, nothing the submission prints may be read as a workflow command.
        in_workflow = os.environ.get("GITHUB_ACTIONS") == "true"
        with commands_stopped(stream) if in_workflow else contextlib.nullcontext():
            yield stream

    return opened


def wants_colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set (no-color.org) or the terminal is dumb."""
    dumb = os.environ.get("TERM") == "dumb"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not dumb


def warn(notice: str) -> None:
    """A notice may name what a submission or a problem holds."""
    print(f"scbench-ci: {terminal_text(notice)}", file=sys.stderr)
