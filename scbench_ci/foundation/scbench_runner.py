"""Which SCBench runner's rules decide a run (`--scbench`): every rule where SCBench's two runners
differ is a field here, read where it takes effect, so the choice is made in one place.

- `1.0`, the default: SCBench 1.0 (upstream #5 "v0.3 ... eval collection" and #6 "v1.0", April
  2026, with fixes to 0a2e7bec, 2026-05-27), what SCBench's users run now; read at
  Dongximing/slop-code-bench 0a2e7bec, which carries the upstream commits unchanged.
- `paper`: SCBench as the paper released it (SprocketLab/slop-code-bench feeab5a, January 2026),
  exactly as scbench-ci followed it before 1.0.

Paths below are under SCBench's `src/slop_code/`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScbenchRunner:
    name: str
    """As `--scbench` names it."""
    title: str
    """In words, for the summary's footer and the console."""
    repository: str
    commit: str
    """The commit of SCBench whose runner these rules follow (abbreviated, as git takes it)."""
    collection_inventory: bool
    """Every evaluation is collection + run + inventory (`evaluation/collection.py`): the tests
    `--collect-only` finds (one pass per marker and one per prior checkpoint) decide each test's
    group, a test collected but never reported counts as failed, every test counts in its group's
    total, and `pytest_collected` and `test_collection_hash` come from it. Not with a `-k` filter
    among the pytest arguments (`_has_k_filter`)."""
    skipped_in_totals: bool
    """Whether a skipped or xfailed test counts in its group's total where no inventory
    recounts the totals: the paper's `add_test_result` counts every test, 1.0's leaves skipped
    ones out (with the inventory, 1.0 counts them again)."""
    infrastructure_exit_codes: frozenset[int] | None
    """pytest's exit codes that are not SCBench's `infrastructure_failure` (1.0: any other, 137
    and 124 included; `pytest_runner.py` `VALID_EXIT_CODES`), with 1.0's other cases of it
    (`results/scbench_rules.py`: more collected than reported, a failed `--collect-only` pass);
    None: the flag is set whenever the checkpoint has a failure of any kind (scbench-ci's rule
    before 1.0)."""
    skipped_bucket: bool
    """evaluation.json's `tests` files a test under `passed`, `failed` or `skipped` (1.0's
    `_group_tests_for_serialization`); without it, `passed` or `failed` (skipped ones with the
    failed)."""
    every_group_counted: bool
    """evaluation.json's `pass_counts` and `total_counts` hold all four groups, 0 included."""
    collection_hash: bool
    """evaluation.json has `test_collection_hash` (null without an inventory)."""
    strict_rates: bool
    """`checkpoint_results.jsonl`'s rows hold 1.0's `get_evaluation_metrics` fields
    (`metrics/checkpoint/extractors.py`): `strict_pass_rate`, `core_pass_rate` and
    `isolated_pass_rate`, no `duration`, and after an earlier checkpoint its `delta.*`; without
    it, the paper's (`pass_rate`, `core_pass_rate`, `checkpoint_pass_rate`, `duration`)."""
    bare_report: bool
    """`evaluation/report.json` is pytest-json-report's report as SCBench's own run has it
    written, without what scbench-ci's runner adds to each test (`markers`, `reruns`,
    `rerun_failure`), so 1.0's files are its own byte for byte; without it, with them (as
    scbench-ci wrote it before 1.0)."""
    snapshot_ignores: tuple[str, ...]
    """What is left out when a submission is copied into the evaluation workspace, as SCBench's
    snapshot leaves it out (`execution/models.py` `SnapshotConfig.ignore_globs`, matched by
    `execution/snapshot.py` `_matches_any`: fnmatch, whose `*` also matches `/`, against the
    path relative to the submission). Empty: scbench-ci's rule before 1.0
    (`workspace.SKIPPED_NAMES`)."""
    image_recipe: str
    """The name of the evaluation image's recipe that follows this runner's
    `execution/docker_runtime/setup_base.docker.j2`."""


SCBENCH_1_0_IGNORES = (
    "*.pyc",
    "__pycache__/*",
    "venv/*",
    ".venv/*",
    ".evaluation_tests/*",
    ".ruff_cache/*",
    ".pytest_cache/*",
    ".mypy_cache/*",
    ".opencode/*",
    ".claude/*",
    "node_modules/*",
    # `EnvironmentSpec.get_ignore_globs` adds the static assets' test copies.
    "tests/assets",
    "tests/assets/*",
)

PAPER = ScbenchRunner(
    name="paper",
    title="SCBench as the paper released it (January 2026)",
    repository="SprocketLab/slop-code-bench",
    commit="feeab5a",
    collection_inventory=False,
    skipped_in_totals=True,
    infrastructure_exit_codes=None,
    skipped_bucket=False,
    every_group_counted=False,
    collection_hash=False,
    strict_rates=False,
    bare_report=False,
    snapshot_ignores=(),
    image_recipe="paper",
)
V1_0 = ScbenchRunner(
    name="1.0",
    title="SCBench 1.0",
    repository="Dongximing/slop-code-bench",
    commit="0a2e7bec",
    collection_inventory=True,
    skipped_in_totals=False,
    infrastructure_exit_codes=frozenset({0, 1}),
    skipped_bucket=True,
    every_group_counted=True,
    collection_hash=True,
    strict_rates=True,
    bare_report=True,
    snapshot_ignores=SCBENCH_1_0_IGNORES,
    image_recipe="1.0",
)
RUNNERS = {runner.name: runner for runner in (V1_0, PAPER)}
DEFAULT_SCBENCH = V1_0.name
SCBENCH_NAMES = tuple(RUNNERS)
FORMER_SCBENCH = PAPER.name
"""What a results.json written before `--scbench` existed was judged by."""


def rules_line(name: str) -> str:
    """Whose rules decided a run, in words: the summary's footer and the console's last lines."""
    runner = scbench_runner(name)
    return (
        f"Judged by the rules of {runner.title} (--scbench {runner.name}: the runner of "
        f"{runner.repository} at {runner.commit})"
    )


def scbench_runner(name: str) -> ScbenchRunner:
    """The runner `--scbench` names; a KeyError for a name it does not take (its parser refuses
    those first)."""
    return RUNNERS[name]
