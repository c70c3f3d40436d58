"""scbench-ci's inventory of the tests (SCBench 1.0's rules, the default) against SCBench 1.0's own
`--collect-only -q` passes, run as its code builds them in a container of its image
(testing/fidelity/scbench_collection.py), on a problem made for the surprises of those passes
(tests/data/inventory/keywords: `checkpoint_1` and `checkpoint_10`, ids with a space, a class,
parametrized ids, a problem-defined marker, markers added by a conftest before and after
pytest's deselection, tests in a sub-folder). Each pass's node ids and exit code are the same, so
are the inventory's groups and hash; where the runner cannot take them in its own session (the
user's pytest arguments, a conftest that prints a line like a node id) it runs the passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from scbench_ci.results.inventory import build_inventory, grouped_ids
from testing.cli import run_cli
from testing.fidelity import scbench_collection, scbench_flow
from testing.paths import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("evaluation_image")]

KEYWORDS = REPO_ROOT / "tests/data/inventory/keywords"
CHECKPOINTS = ["checkpoint_1", "checkpoint_10"]
GHOST = ".evaluation_tests/test_checkpoint_1.py::test_ghost"
PRINTS_A_GHOST = f'''

def pytest_collection_finish(session):
    print("{GHOST}")
'''
CASES = {
    "checkpoint_1": ("checkpoint_1", (), "session"),
    "checkpoint_10": ("checkpoint_10", (), "session"),
    "pytest-args": ("checkpoint_10", ("-ra",), "passes"),
    "ghost": ("checkpoint_1", (), "passes"),
}
"""name: (checkpoint, the user's pytest arguments, how the runner takes the inventory)."""


@pytest.fixture(scope="module")
def problems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The keywords problem, and a copy whose conftest prints a line like a node id once the
    tests are collected (in every one of SCBench's passes)."""
    ghost = tmp_path_factory.mktemp("ghost") / "keywords"
    shutil.copytree(KEYWORDS, ghost)
    with (ghost / "tests/conftest.py").open("a") as conftest:
        conftest.write(PRINTS_A_GHOST)
    return {name: ghost if name == "ghost" else KEYWORDS for name in CASES}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory, problems: dict[str, Path]) -> dict[str, Path]:
    """Each case's checkpoint folder, evaluated by scbench-ci with nothing configured."""
    folders = {}
    for name, (checkpoint, pytest_args, _) in CASES.items():
        output = tmp_path_factory.mktemp("ours") / name
        done = run_cli(
            "evaluate",
            *("--problem", problems[name], "--checkpoint", checkpoint),
            *("--submission", problems[name] / "solutions" / checkpoint),
            *("--output", output, "--executor", "docker", "--no-quality", "--quiet"),
            *(("--", *pytest_args) if pytest_args else ()),
            cwd=REPO_ROOT,
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        folders[name] = output / "keywords" / checkpoint
    return folders


@pytest.fixture(scope="module")
def theirs(
    tmp_path_factory: pytest.TempPathFactory, problems: dict[str, Path], evaluation_image: str
) -> dict[str, list[scbench_collection.Pass]]:
    """Each case's passes as SCBench 1.0 runs them."""
    found = {}
    for name, (checkpoint, pytest_args, _) in CASES.items():
        workspace = tmp_path_factory.mktemp("scbench") / "workspace"
        submission = problems[name] / "solutions" / checkpoint
        markers = {"slow": "cases that take a while"}
        scbench_flow.stage(problems[name], CHECKPOINTS, checkpoint, submission, workspace, markers)
        found[name] = scbench_collection.run_passes(
            workspace,
            evaluation_image,
            checkpoint=checkpoint,
            prior=CHECKPOINTS[: CHECKPOINTS.index(checkpoint)],
            entrypoint="uv run main.py",
            test_dependencies=[],
            variables={},
            pytest_args=pytest_args,
        )
    return found


def _our_passes(folder: Path) -> dict[tuple[str | None, str], tuple[int, list[str]]]:
    document: dict[str, Any] = json.loads((folder / "inventory.json").read_text())
    return {(p["marker"], p["keyword"]): (p["exit"], sorted(p["ids"])) for p in document["passes"]}


@pytest.mark.parametrize("name", list(CASES))
def test_each_pass_finds_what_scbench_s_pass_finds(
    name: str, ours: dict[str, Path], theirs: dict[str, list[scbench_collection.Pass]]
) -> None:
    expected = {(p.marker, p.keyword): (p.exit_code, sorted(p.node_ids)) for p in theirs[name]}
    assert _our_passes(ours[name]) == expected
    taken_by = json.loads((ours[name] / "inventory.json").read_text())["taken_by"]
    assert taken_by == CASES[name][2]


@pytest.mark.parametrize("name", list(CASES))
def test_the_groups_and_the_hash_are_scbench_s(
    name: str, ours: dict[str, Path], theirs: dict[str, list[scbench_collection.Pass]]
) -> None:
    checkpoint = CASES[name][0]
    inventory = build_inventory(
        ((p.marker, p.exit_code, list(p.node_ids)) for p in theirs[name]), checkpoint
    )
    evaluation = json.loads((ours[name] / "evaluation.json").read_text())
    assert evaluation["test_collection_hash"] == inventory.collection_hash
    assert evaluation["pytest_collected"] == len(inventory.tests)
    listed = {
        key: sorted(test for bucket in buckets.values() for test in bucket)
        for key, buckets in evaluation["tests"].items()
    }
    for key, ids in grouped_ids(inventory.tests).items():
        assert set(ids) <= set(listed[key]), key


def test_what_scbench_s_passes_show_of_the_keywords_problem(
    theirs: dict[str, list[scbench_collection.Pass]], ours: dict[str, Path]
) -> None:
    """The surprises themselves, as SCBench 1.0 has them."""
    passes = {(p.marker, p.keyword): set(p.node_ids) for p in theirs["checkpoint_10"]}
    prior = passes[(None, "checkpoint_1")]
    # `-k checkpoint_1` matches checkpoint_10's file too.
    assert ".evaluation_tests/test_checkpoint_10.py::test_upper" in prior
    # An id with a space is never taken; the others of its parametrization are.
    assert ".evaluation_tests/test_checkpoint_10.py::test_words[a]" in prior
    assert not any("b c" in node for node in prior)
    # The conftest's `error` (before the deselection) counts, its trylast `functionality` not.
    assert (
        ".evaluation_tests/test_checkpoint_10.py::test_invalid_option"
        in passes[("error", "checkpoint_10")]
    )
    assert not any("optional" in node for node in passes[("functionality", "checkpoint_10")])
    # A test in a sub-folder is taken only when a `-k` matches its own names.
    assert ".evaluation_tests/sub/test_extra.py::test_plain" not in prior
    assert ".evaluation_tests/sub/test_extra.py::test_Checkpoint_10_in_capitals" in prior
    groups = json.loads((ours["checkpoint_10"] / "evaluation.json").read_text())["tests"]
    assert "test_slow_case" in groups["checkpoint_10-Core"]["passed"]
    assert "test_Checkpoint_10_in_capitals" in groups["extra-Regression"]["passed"]


def test_a_printed_node_id_is_a_test_that_never_reported(ours: dict[str, Path]) -> None:
    """SCBench 1.0 takes the conftest's line for a test of its inventory: never reported, it is
    failed and the checkpoint an infrastructure failure; scbench-ci fails it as unreported."""
    evaluation = json.loads((ours["ghost"] / "evaluation.json").read_text())
    assert "test_ghost" in evaluation["tests"]["checkpoint_1-Error"]["failed"]
    assert evaluation["infrastructure_failure"] is True
    result = json.loads((ours["ghost"] / "result.json").read_text())
    assert result["failure"]["kind"] == "unreported"
    assert result["scbench"]["infrastructure_failure"] is True
