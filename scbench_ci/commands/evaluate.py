"""`scbench-ci evaluate`: run a problem's tests against a submission and report the verdict."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from scbench_ci.errors import UsageError
from scbench_ci.evaluation import evaluate
from scbench_ci.executors import EXECUTOR_NAMES
from scbench_ci.executors.docker.executor import (
    DEFAULT_CPUS,
    DEFAULT_DISK,
    DEFAULT_IMAGE,
    DEFAULT_MEMORY,
    DEFAULT_PIDS_LIMIT,
)
from scbench_ci.options import DEFAULT_SESSION_TIMEOUT_S, EvaluationOptions
from scbench_ci.outputs.console import render_report
from scbench_ci.outputs.exit_status import DEFAULT_FAIL_ON, FAIL_ON, FAIL_ON_HELP, exit_code
from scbench_ci.outputs.github.workflow import commands_stopped
from scbench_ci.outputs.summary import write_summary
from scbench_ci.problem.model import CHECKPOINT_NAME_RULE, is_checkpoint_name
from scbench_ci.results import policy
from scbench_ci.results.baseline import compared, load_baseline
from scbench_ci.results.file import write_results
from scbench_ci.results.model import RunResult


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_problem_argument(parser)
    parser.add_argument(
        "--checkpoint",
        required=True,
        metavar="NAME|all",
        help="the checkpoint to evaluate, or `all` for every one in order",
    )
    parser.add_argument(
        "--submission",
        required=True,
        metavar="DIR",
        help="the submission folder; `{problem}` is replaced by each problem's folder name and "
        "`{checkpoint}` by each checkpoint's name (runs/x/{problem}/{checkpoint}/snapshot, "
        "problems/{problem}/solutions/{checkpoint}). It is only read, never written.",
    )
    parser.add_argument(
        "--jobs",
        type=at_least(1),
        metavar="N",
        help="evaluations side by side, each in its own container (default: as many as the "
        "cores hold at --cpus each, at least 1)",
    )
    parser.add_argument(
        "--skip-existing",
        action="store_true",
        help="reuse the results in --output of evaluations whose problem files, submission "
        "files and settings are unchanged, instead of running them again",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="PROBLEM/CHECKPOINT",
        help="evaluate only this checkpoint of the problems given (a shard of `scbench-ci "
        "plan`); may be repeated, or hold several separated by spaces",
    )
    prior = parser.add_mutually_exclusive_group()
    prior.add_argument(
        "--include-prior-tests",
        dest="include_prior_tests",
        action="store_true",
        default=None,
        help="also run earlier checkpoints' tests (as Regression)",
    )
    prior.add_argument(
        "--no-include-prior-tests",
        dest="include_prior_tests",
        action="store_false",
        help="run only the checkpoint's own tests",
    )
    add_run_arguments(parser)
    parser.add_argument(
        "--policy",
        default=policy.DEFAULT_POLICY,
        choices=policy.POLICY_NAMES,
        help="what makes a checkpoint pass (default: %(default)s)",
    )
    add_comparison_arguments(parser)
    flaky = parser.add_argument_group("flaky tests")
    flaky.add_argument(
        "--reruns",
        type=at_least(0),
        default=0,
        metavar="N",
        help="rerun a failing test up to N times in its session (no new install); one that "
        "then passes is flaky (default: %(default)s)",
    )
    flaky.add_argument(
        "--repeat",
        type=at_least(1),
        default=1,
        metavar="N",
        help="run each checkpoint whole N times and count each test's passes; a test whose "
        "outcome differs is flaky (default: %(default)s)",
    )
    flaky.add_argument(
        "--flaky-passes",
        action="store_true",
        help="count flaky tests as passed for the policy (default: as failed)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(".scbench"),
        metavar="DIR",
        help="where reports, logs and results.json go (default: ./.scbench)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="do not stream the test output; print only the report"
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
        default="auto",
        choices=EXECUTOR_NAMES,
        help="where the tests run: docker, local, or auto (docker when a daemon answers, else "
        "local) (default: %(default)s)",
    )
    container = parser.add_argument_group("docker executor")
    container.add_argument(
        "--image",
        metavar="IMAGE",
        help=f"the image the tests run in (default: the environment file's, else {DEFAULT_IMAGE})",
    )
    container.add_argument(
        "--memory",
        default=DEFAULT_MEMORY,
        metavar="SIZE",
        help="memory limit, no swap (default: %(default)s)",
    )
    container.add_argument(
        "--cpus",
        type=float,
        default=DEFAULT_CPUS,
        metavar="N",
        help="CPU limit (default: %(default)g)",
    )
    container.add_argument(
        "--pids-limit",
        type=int,
        default=DEFAULT_PIDS_LIMIT,
        metavar="N",
        help="process limit (default: %(default)s)",
    )
    container.add_argument(
        "--disk",
        default=DEFAULT_DISK,
        metavar="SIZE|auto",
        help="space for the workspace, and again for /tmp: auto is the free space of Docker's "
        "disk, as SCBench's tests see it; in memory, so what is written counts toward --memory "
        "(default: %(default)s)",
    )
    container.add_argument(
        "--test-network",
        action="store_true",
        help="keep the network during the tests (default: cut after setup; loopback stays)",
    )
    container.add_argument(
        "--no-cache",
        dest="use_cache",
        action="store_false",
        help="do not use the cached environments: the test runner is installed, and the setup "
        "run, in every run",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="S",
        help="per-test timeout (default: the checkpoint's, the problem's, or 30)",
    )
    parser.add_argument(
        "--session-timeout",
        type=_seconds,
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
        "image": args.image,
        "memory": args.memory,
        "cpus": args.cpus,
        "pids_limit": args.pids_limit,
        "disk": args.disk,
        "test_network": args.test_network,
        "use_cache": args.use_cache,
        "test_timeout_s": args.timeout,
        "session_timeout_s": args.session_timeout,
    }


def options(args: argparse.Namespace) -> EvaluationOptions:
    if args.checkpoint != "all" and not is_checkpoint_name(args.checkpoint):
        raise UsageError(
            f"--checkpoint: {args.checkpoint!r} is not a checkpoint name ({CHECKPOINT_NAME_RULE})"
        )
    return EvaluationOptions(
        problems=tuple(args.problem),
        checkpoint=args.checkpoint,
        submission=args.submission,
        output_dir=args.output,
        include_prior_tests=args.include_prior_tests,
        policy=args.policy,
        pytest_args=tuple(args.pytest_args),
        jobs=args.jobs,
        skip_existing=args.skip_existing,
        reruns=args.reruns,
        repeat=args.repeat,
        flaky_passes=args.flaky_passes,
        select=tuple(key for value in args.select for key in value.split()),
        **run_options(args),
    )


def add_comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags `evaluate` and `merge` share: the baseline, and what fails the run."""
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


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    request = chosen.request()
    baseline = load_baseline(args.baseline) if args.baseline else None
    executor = chosen.make_executor(
        warn=lambda notice: print(f"scbench-ci: {notice}", file=sys.stderr)
    )
    result = compared(
        streamed(lambda echo: evaluate(request, executor, echo), args.quiet), baseline
    )
    results_path = write_results(result, request.output_dir)
    write_summary(result, request.output_dir)
    sys.stdout.write(render_report(result, results_path))
    return exit_code(result, args.fail_on)


def streamed(run: Callable[[TextIO | None], RunResult], quiet: bool) -> RunResult:
    """`run` with the tests' output streamed to stdout, unless quiet."""
    if quiet:
        return run(None)
    # In a workflow step, nothing the submission prints may be read as a workflow command.
    in_workflow = os.environ.get("GITHUB_ACTIONS") == "true"
    with commands_stopped(sys.stdout) if in_workflow else contextlib.nullcontext():
        return run(sys.stdout)


def at_least(least: int) -> Callable[[str], int]:
    """An argument type: a whole number of at least `least`."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}: {text!r}")
        return value

    return whole_number


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {text!r}")
    return value
