"""The seam between the pipeline and the places tests can run in.

An executor gets a staged workspace on this machine and a command; it installs the test runner
(pytest and its plugins), runs the setup commands and then the tests, all with the workspace as
the working directory, under the session timeout. When `execute` returns, every process of the
run is gone, the output of each phase is in `log_dir`, and `<workspace>/.scbench/` on this machine
holds what the run left there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TextIO

from scbench_ci.foundation.layout import SCBENCH_TESTS_USER, SCBENCH_WORKDIR
from scbench_ci.foundation.scbench_runner import V1_0, ScbenchRunner

EVALUATION_CACHE_SCOPE = "evaluation"
REVIEW_CACHE_SCOPE = "review"
"""The environment caches' scopes: `check`'s review builds its own, apart from the
evaluations'."""
Phase = Literal["setup", "tests"]
SCB_CHECK_VERSION = "0.2.0"
SCB_CHECK = f"scb-check=={SCB_CHECK_VERSION}"
"""SCBench's code-quality measure (PyPI), pinned: its figures change with its rules."""
QUALITY_PYTHON = "3.12"
"""The Python scb-check needs (it requires 3.12 or newer); the image's, never downloaded."""
QUALITY_CPU_S = 60
"""The CPU time each of the quality measure's processes may use (RLIMIT_CPU): scb-check takes a
few seconds of it for thousands of lines, however busy the machine is."""
QUALITY_TIMEOUT_S = 600.0
"""The quality measure's own wall-clock limit, after the tests (not part of the session's):
generous, as a busy machine stretches it; QUALITY_CPU_S stops a parser that spins."""
_KILLED_BY_CPU_LIMIT = (128 + 24, 128 + 9)
"""SIGXCPU at the soft limit, SIGKILL at the hard one: as a shell reports them."""
QUALITY_INSTALL_TIMEOUT_S = 600.0
"""How long installing the quality measure's environment may take (once, when it is cached)."""
MAX_QUALITY_OUTPUT_BYTES = 16 * 1024 * 1024
"""What the measure prints: scb-check's report, one small JSON object, and the names of the files
it measured (quality_command.LAUNCHER); more is not read."""


@dataclass(frozen=True)
class TestCommand:
    __test__ = False  # not a pytest test class

    requirements: tuple[str, ...]
    """What the test runner's environment holds: pytest, its plugins, the test dependencies."""
    pytest_args: tuple[str, ...]
    variables: dict[str, str]
    """SCBench's variables plus the problem's, checkpoint's and environment's; the executor adds
    the minimal base (PATH, HOME, locale) for the place it runs in."""
    runner_options: tuple[str, ...] = ()
    """The runner's own options besides the executor's (`--scbench-inventory=SPEC`)."""

    def runner_argv(self, python: list[str], runner_script: str, *options: str) -> list[str]:
        """pytest through our runner script (`pytest_runner`), `python` being the runner's."""
        return [*python, "-I", runner_script, *options, *self.runner_options, *self.pytest_args]

    def uvx_argv(self, runner_script: str, *options: str) -> list[str]:
        """The command that builds the runner's environment and runs the tests in one go."""
        withs = [f"--with={requirement}" for requirement in self.requirements]
        return self.runner_argv(["uvx", *withs, "python"], runner_script, *options)


@dataclass(frozen=True)
class ExecutionRequest:
    workspace: Path
    log_dir: Path
    """A folder outside the workspace, owned by the runner."""
    setup_commands: tuple[str, ...]
    command: TestCommand
    session_timeout_s: float
    echo: TextIO | None
    """Where output is streamed live as it arrives, if anywhere."""
    image: str | None = None
    """The container image the environment file names, if any (container executors only): a
    base, as SCBench's runner has it, that SCBench's evaluation layer is built on."""
    network: str | None = None
    """The Docker network the environment file names (`docker.network`), if any."""
    tests_user: str = SCBENCH_TESTS_USER
    """`UID:GID` setup and the tests run as (container executors): `docker.user`, as SCBench's
    `get_eval_user` takes it."""
    workdir: str = SCBENCH_WORKDIR
    """Where the workspace is and setup and the tests run (container executors):
    `docker.workdir`."""
    cut_network: bool = False
    """Cut the network after setup whatever the executor's settings (container executors)."""
    default_environment: bool = False
    """Whether the setup commands are SCBench's default environment's (`uv init`, `uv add -r
    requirements.txt`, from environment.default_environment): a container executor may then
    give the workspace what they make of its requirements.txt from a cache, where that is
    provably the same."""
    quality: bool = False
    """Measure the submission's code quality (scb-check) after the tests, on its files as
    staged (copied before any of its code ran), in the same place and as the same user."""
    quality_timeout_s: float = QUALITY_TIMEOUT_S
    """The measure's own time limit."""
    scbench: ScbenchRunner = V1_0
    """Whose rules decide the run (`--scbench`): a container executor builds the default image
    from its recipe (`ScbenchRunner.image_recipe`)."""
    seal_key: str = ""
    """The secret the test runner seals its reports with; only the test process gets it. Set by
    `sealed.run_sealed` on the machine that runs the request, never before."""


@dataclass(frozen=True)
class MissingProgram:
    """A program the image of the run's SCBench runner holds and the image a run ran in lacks."""

    program: str
    without: str
    """What a test sees without it."""


@dataclass(frozen=True)
class ImageRecord:
    """The image a run ran in, as results.json records it."""

    name: str
    """As it was asked for: the default, `--image`, or the environment file's."""
    id: str
    built_from: str | None = None
    """The base SCBench's evaluation layer was built on here, when it was."""
    toolchains: str | None = None
    """Where its Node and Rust came from (`upstream`, `registries`), when it says."""
    note: str | None = None
    """What the user must know about how it was made."""
    versions: dict[str, str] = field(default_factory=dict)
    """The first line of `--version` of python, node, npm, g++, rustc and cargo in it."""
    missing: tuple[MissingProgram, ...] = ()
    """The programs of the runner's image (image_recipe.Recipe.programs) it lacks."""


@dataclass(frozen=True)
class QualityRun:
    """What the quality measure left: scb-check's report as it printed it (untrusted bytes, read
    by the results' strict reader), or why there is none."""

    report: bytes | None
    reason: str | None
    """Why there is no report, in words; None when there is one."""
    seconds: float
    tool_version: str = SCB_CHECK_VERSION
    staged: tuple[str, ...] = ()
    """The submission's source files as staged for the measure (`quality_command.staged_sources`):
    what it should measure, which the report's list of files measured is held against."""


_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
REPORTED = (0, 1)
"""scb-check's exit codes with a report: 1 says it found something to flag."""


def cpu_limited(argv: list[str]) -> list[str]:
    """`argv` with each of its processes held to QUALITY_CPU_S seconds of CPU time."""
    return ["/bin/sh", "-c", 'ulimit -t "$0" && exec "$@"', str(QUALITY_CPU_S), *argv]


def reported(code: int, stdout: bytes, stderr: bytes) -> tuple[bytes | None, str | None]:
    """scb-check's report from how it ended (any executor), or why there is none."""
    if code in _KILLED_BY_CPU_LIMIT and not stdout.strip():
        return None, (
            f"scb-check was killed (exit code {code}): its CPU time limit ({QUALITY_CPU_S} s), "
            "or the memory limit"
        )
    if code not in REPORTED or not stdout.strip():
        said = _last_line(stderr)
        return None, f"scb-check failed with exit code {code}" + (f": {said}" if said else "")
    if len(stdout) > MAX_QUALITY_OUTPUT_BYTES:
        return None, f"scb-check's output is larger than {MAX_QUALITY_OUTPUT_BYTES} bytes"
    return stdout, None


def timed_out(limit_s: float = QUALITY_TIMEOUT_S) -> str:
    return f"scb-check did not finish within its time limit ({limit_s:g} s)"


def _last_line(text: bytes) -> str:
    """The last line scb-check printed, as printable text of at most 200 characters."""
    lines = _COLOURS.sub("", text.decode(errors="replace")).strip().splitlines()
    last = "".join(ch if ch.isprintable() else " " for ch in lines[-1]) if lines else ""
    return last if len(last) <= 200 else f"{last[:197]}..."


@dataclass(frozen=True)
class ExecutionResult:
    exit_code: int | None
    """pytest's exit code; None when it never ran or was killed at the session timeout."""
    setup_exit_code: int | None
    """The first failing setup command's exit code; None when setup succeeded or had nothing.
    The tests ran all the same (as under SCBench), unless the session timeout came first."""
    timed_out_in: Phase | None
    """The phase the session timeout stopped, if it did."""
    duration_s: float
    runner_exit_code: int | None = None
    """The exit code of the test runner's installation, when it failed."""
    leftover_processes: int = 0
    """Processes still running after their phase ended, killed by the executor."""
    limits_hit: tuple[str, ...] = ()
    """The resource limits the run ran into, one sentence each."""
    phases: dict[str, float] = field(default_factory=dict)
    """Seconds spent in each of the executor's phases, in order."""
    image: ImageRecord | None = None
    """The container image it ran in (container executors)."""
    quality: QualityRun | None = None
    """The quality measure's outcome, when the request asked for it."""
    refused: str | None = None
    """Why the run did not start, for a cause of the submission's before any of its code ran
    (its files take more of the memory limit than leaves room for the run): a resources fail."""


class Executor(Protocol):
    name: str

    def workspace_dir(self, workspace: Path) -> str:
        """The workspace's path as the test process sees it."""
        ...

    def preflight(
        self, image: str | None, echo: TextIO | None, scbench: ScbenchRunner = V1_0
    ) -> None:
        """Once, before the first run: whether runs can start here at all (for a container
        executor: its daemon answers, and the image of the runner's recipe
        (`scbench.image_recipe`) on `image`, the environment file's if any, is here, pulled or
        built, its progress on `echo`); else InfrastructureError, one line saying what to do."""
        ...

    def memory_limit(self) -> int | None:
        """The most memory one run may take, in bytes (None: not limited)."""
        ...

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """`runs` more runs are coming (None: an unknown number, until `close`), at most
        `side_by_side` at once: an executor that can make a run's place ahead of it (a
        container) makes that many ahead, no more."""
        ...

    def execute(self, request: ExecutionRequest) -> ExecutionResult: ...

    def close(self) -> None:
        """Once no run is left: what was made ahead and not used is removed, and every removal
        of a run's place is done when this returns."""
        ...

    def cancel(self) -> None:
        """From another thread: stop every run in progress now, and start none after this
        (`execute` then raises InfrastructureError); the run is being abandoned."""
        ...
