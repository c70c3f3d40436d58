"""An evaluation's options, one set for both front ends.

The CLI's flags (`commands/evaluate.py`) and the action's inputs (`github/inputs.py`) are each read
into `EvaluationOptions`; the evaluation request and the executor are made from it here, by the one
piece of code both use, so the CLI and the action cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from scbench_ci.engines.pool import default_jobs
from scbench_ci.evaluation import EvaluationRequest
from scbench_ci.executors import make_executor
from scbench_ci.executors.base import Executor
from scbench_ci.executors.docker.executor import (
    DEFAULT_CPUS,
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    DEFAULT_PIDS_LIMIT,
    EVALUATION_CACHE_SCOPE,
)
from scbench_ci.results.policy import DEFAULT_POLICY

DEFAULT_SESSION_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class EvaluationOptions:
    problems: tuple[Path, ...]
    """Problem folders, or folders of problem folders."""
    checkpoint: str
    """A checkpoint name, or `all`."""
    submission: str
    """A folder; `{problem}` and `{checkpoint}` in it are replaced by each job's."""
    output_dir: Path
    executor: str = "auto"
    include_prior_tests: bool | None = None
    entrypoint: str | None = None
    environment: Path | None = None
    image: str | None = None
    memory: str = DEFAULT_MEMORY
    cpus: float = DEFAULT_CPUS
    pids_limit: int = DEFAULT_PIDS_LIMIT
    disk: str = DEFAULT_DISK
    test_network: bool = False
    use_cache: bool = True
    test_timeout_s: float | None = None
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S
    policy: str = DEFAULT_POLICY
    pytest_args: tuple[str, ...] = ()
    jobs: int | None = None
    """Evaluations side by side; None: as many as the cores hold at `cpus` each."""
    skip_existing: bool = False
    reruns: int = 0
    repeat: int = 1
    flaky_passes: bool = False
    select: tuple[str, ...] = ()
    """Only these `<problem>/<checkpoint>`: a shard of `scbench-ci plan`."""
    own_output: bool = False
    """See `EvaluationRequest.own_output`."""

    def request(self) -> EvaluationRequest:
        return EvaluationRequest(
            problems=self.problems,
            checkpoint=self.checkpoint,
            submission=self.submission,
            output_dir=self.output_dir,
            policy=self.policy,
            session_timeout_s=self.session_timeout_s,
            include_prior_tests=self.include_prior_tests,
            entrypoint=self.entrypoint,
            environment_file=self.environment,
            test_timeout_s=self.test_timeout_s,
            pytest_args=self.pytest_args,
            jobs=self.jobs or default_jobs(self.cpus if self.executor != "local" else 1.0),
            skip_existing=self.skip_existing,
            settings=self.executor_settings(),
            reruns=self.reruns,
            repeat=self.repeat,
            flaky_passes=self.flaky_passes,
            select=self.select,
            own_output=self.own_output,
        )

    def executor_settings(self) -> dict[str, object]:
        """How the tests are run: what makes two runs of the same files comparable."""
        names = ("executor", "image", "memory", "cpus", "pids_limit", "disk", "test_network")
        return {name: value for name, value in asdict(self).items() if name in names}

    def make_executor(
        self, warn: Callable[[str], None], cache_scope: str = EVALUATION_CACHE_SCOPE
    ) -> Executor:
        """`cache_scope`: REVIEW_CACHE_SCOPE for `check`, whose problems are under review."""
        return make_executor(
            self.executor,
            warn=warn,
            image=self.image,
            memory=self.memory,
            cpus=self.cpus,
            pids_limit=self.pids_limit,
            disk=self.disk,
            use_cache=self.use_cache,
            test_network=self.test_network,
            cache_scope=cache_scope,
        )
