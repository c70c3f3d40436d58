"""A generated problem set for the benchmarks: P problems x C checkpoints x T tests.

Each test starts the submission once through the default entrypoint (`uv run main.py`), as
SCBench's CLI problems do, and the reference solutions have a `requirements.txt` (PyYAML), so
every evaluation sets up a dependency environment. Layout, as a problem repository:

    <root>/problems/gen_01/{config.yaml, checkpoint_1.md, tests/, solutions/checkpoint_1/}

    python benchmarks/problem_set.py ROOT [--problems P] [--checkpoints C] [--tests T]
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

CONFTEST = """
import shlex

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)


@pytest.fixture
def entrypoint_argv(request):
    return shlex.split(request.config.getoption("--entrypoint"))


@pytest.fixture
def checkpoint_name(request):
    return request.config.getoption("--checkpoint")
"""

TESTS = """
import subprocess

import pytest


@pytest.mark.parametrize("number", range({tests}))
def test_square(entrypoint_argv, number):
    run = subprocess.run(
        [*entrypoint_argv, str(number)], capture_output=True, text=True, timeout=30
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "{checkpoint}: " + str(number * number)
"""

SOLUTION = """
import sys

import yaml

number = int(sys.argv[1])
print(yaml.safe_load("{checkpoint}") + ": " + str(number * number))
"""
PLAIN_SOLUTION = """
import sys

number = int(sys.argv[1])
print("{checkpoint}: " + str(number * number))
"""
"""Without requirements.txt: SCBench's setup makes the same workspace for every submission."""


def generate(
    root: Path, problems: int, checkpoints: int, tests: int, requirements: bool = True
) -> Path:
    """Write the problem set under `root/problems` (returned); what is there is replaced.
    `requirements`: the solutions have a requirements.txt (else PLAIN_SOLUTION)."""
    folder = root / "problems"
    for index in range(1, problems + 1):
        problem = folder / f"gen_{index:02}"
        for name in write_problem(problem, checkpoints):
            _write(problem / f"{name}.md", f"Print `{name}: ` and the square of the argument.\n")
            _write(problem / f"tests/test_{name}.py", TESTS.format(tests=tests, checkpoint=name))
            solution = SOLUTION if requirements else PLAIN_SOLUTION
            _write(problem / f"solutions/{name}/main.py", solution.format(checkpoint=name))
            if requirements:
                _write(problem / f"solutions/{name}/requirements.txt", "pyyaml\n")
    return folder


def write_problem(problem: Path, checkpoints: int, timeout_s: int | None = None) -> list[str]:
    """The problem's config.yaml (entry `main`, each checkpoint running its own tests only, the
    per-test timeout when given) and tests/conftest.py; returns the checkpoints' names."""
    names = [f"checkpoint_{n}" for n in range(1, checkpoints + 1)]
    checkpoint_lines = "".join(
        f"  {name}:\n    order: {n}\n    include_prior_tests: false\n"
        for n, name in enumerate(names, 1)
    )
    timeout_line = "" if timeout_s is None else f"timeout: {timeout_s}\n"
    _write(
        problem / "config.yaml",
        f"name: {problem.name}\nversion: 1\nentry_file: main\n{timeout_line}"
        f"checkpoints:\n{checkpoint_lines}",
    )
    _write(problem / "tests/conftest.py", CONFTEST)
    return names


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--checkpoints", type=int, default=3)
    parser.add_argument("--tests", type=int, default=50)
    args = parser.parse_args()
    print(generate(args.root, args.problems, args.checkpoints, args.tests))


if __name__ == "__main__":
    main()
