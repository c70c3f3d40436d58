"""scripts/test.sh's tiers, both as it runs them where provisioning is done and while it is still
running: together they select every test of the suite, each test once."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _pytest.mark.expression import Expression

from testing.collected_markers import PREFIX
from testing.paths import REPO_ROOT

TEST_SH = REPO_ROOT / "scripts" / "test.sh"


def _tiers(array: str) -> list[tuple[str, str, str]]:
    """(name, workers, marker expression) of each tier of the script's bash array `array`, as
    bash expands them."""
    expand = f'source <(sed -n "/^{array}=(/,/^)/p" {TEST_SH}); printf "%s\\n" "${{{array}[@]}}"'
    lines = subprocess.run(
        ["bash", "-c", expand], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return [
        (name, workers, expression)
        for name, workers, expression in (line.split("|", 2) for line in lines)
    ]


def _markers_of_each_test() -> dict[str, set[str]]:
    """Every test of the suite and its markers, as one collection sees them."""
    collect = ("--collect-only", "-q", "-p", "no:cacheprovider", "-p", "testing.collected_markers")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *collect],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    lines = [line[len(PREFIX) :] for line in run.stdout.splitlines() if line.startswith(PREFIX)]
    return {test: set(names.split()) for test, names in (line.split("\t") for line in lines)}


def _selecting(tiers: list[tuple[str, str, str]], markers: set[str]) -> list[str]:
    """The tiers whose expression selects a test of these markers."""
    return [
        name
        for name, _, expression in tiers
        if Expression.compile(expression).evaluate(lambda marker, **_: marker in markers)
    ]


@pytest.mark.slow
def test_the_tiers_select_every_test_once() -> None:
    tests = _markers_of_each_test()
    assert len(tests) > 1000
    auto_jobs = (
        "tests/integration/test_auto_jobs.py::test_auto_starts_more_beside_evaluations_that_wait"
    )
    docker_unmarked_by_fixtures = (
        "tests/integration/test_preflight.py::test_an_image_neither_here_nor_pullable_is_one_line"
    )
    for array in ("tiers", "tiers_while_provisioning"):
        tiers = _tiers(array)
        # The last runs alone, in the script's own process.
        assert tiers[-1] == ("serial", "-", "serial"), array
        tiers_of = {test: _selecting(tiers, markers) for test, markers in tests.items()}
        assert {test: names for test, names in tiers_of.items() if len(names) != 1} == {}, array
        assert tiers_of[auto_jobs] == ["serial"], array
        assert tiers_of[docker_unmarked_by_fixtures] == ["side by side"], array
    # The script runs the tier of this name with no Docker daemon to reach.
    assert _tiers("tiers_while_provisioning")[0][0] == "while provisioning"
