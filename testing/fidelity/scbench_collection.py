"""SCBench 1.0's collection of a checkpoint's tests, re-created as its code runs it, for the
differential test of scbench-ci's inventory (tests/integration/test_inventory.py).

What SCBench 1.0 does (slop_code `evaluation/collection.py` `collect_checkpoint_tc`), and so what
this does: in the workspace SCBench stages (`scbench_flow.stage`), one `uvx --with=<plugins>
pytest --collect-only -q --entrypoint=<...> --checkpoint=<name> [-m <marker>] -k <name>
.evaluation_tests` pass for each of the markers `error`, `functionality`, `regression` and none,
`-k` the evaluated checkpoint's name, then one pass without a marker for each prior checkpoint
(`-k <prior>`, `--checkpoint=<prior>`); each pass's standard output, when it exits with 0 or 5,
read line by line for node ids (`_parse_collect_stdout`). SCBench runs each pass in a container of
its own after the setup commands; here they run one after the other in one container of
SCBench's image, after the setup commands once.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from testing.fidelity.scbench_flow import TEST_DEPENDENCIES, WORKSPACE_TEST_DIR, run

MARKERS = ("error", "functionality", "regression", None)
_SEPARATOR = "=====scbench-collection-pass====="


@dataclass(frozen=True)
class Pass:
    marker: str | None
    keyword: str
    exit_code: int
    node_ids: tuple[str, ...]


def collect_command(
    *,
    checkpoint: str,
    entrypoint: str,
    marker: str | None,
    test_dependencies: list[str],
    pytest_args: tuple[str, ...] = (),
) -> str:
    """SCBench 1.0's `_build_collect_cmd`, word for word."""
    withs = [f"--with={dependency}" for dependency in (*TEST_DEPENDENCIES, *test_dependencies)]
    parts = [
        "uvx",
        *withs,
        "pytest",
        "--collect-only",
        "-q",
        f"--entrypoint={shlex.quote(entrypoint)}",
        f"--checkpoint={shlex.quote(checkpoint)}",
    ]
    if marker is not None:
        parts.extend(["-m", shlex.quote(marker)])
    parts.extend(["-k", shlex.quote(checkpoint)])
    parts.extend(shlex.quote(arg) for arg in pytest_args)
    parts.append(WORKSPACE_TEST_DIR)
    return " ".join(parts)


def parse_collect_stdout(stdout: str) -> tuple[str, ...]:
    """SCBench 1.0's `_parse_collect_stdout`."""
    found = []
    for line in stdout.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("=") or stripped.startswith("collected "):
            continue
        if "::" not in stripped:
            continue
        if " " in stripped:
            continue
        found.append(stripped)
    return tuple(found)


def run_passes(
    workspace: Path,
    image: str,
    *,
    checkpoint: str,
    prior: list[str],
    entrypoint: str,
    test_dependencies: list[str],
    variables: dict[str, str],
    pytest_args: tuple[str, ...] = (),
) -> list[Pass]:
    """Every pass of SCBench 1.0's collection of `checkpoint` (`prior`: the prior checkpoints,
    with prior tests), in the staged `workspace`, after SCBench's setup, in one container of
    `image` (`scbench_flow.run`)."""
    planned = [(marker, checkpoint) for marker in MARKERS] + [(None, name) for name in prior]
    lines = []
    for index, (marker, name) in enumerate(planned):
        command = collect_command(
            checkpoint=name,
            entrypoint=entrypoint,
            marker=marker,
            test_dependencies=test_dependencies,
            pytest_args=pytest_args,
        )
        out = f"/tmp/pass-{index}.out"
        lines.append(f'{command} > {out} 2>/dev/null; echo "{_SEPARATOR} $?"; cat {out}')
    output = run(workspace, image, "\n".join(lines), variables).output
    passes = []
    for (marker, name), chunk in zip(planned, output.split(f"{_SEPARATOR} ")[1:], strict=True):
        code, _, stdout = chunk.partition("\n")
        exit_code = int(code.strip())
        ids = parse_collect_stdout(stdout) if exit_code in (0, 5) else ()
        passes.append(Pass(marker, name, exit_code, ids))
    return passes
