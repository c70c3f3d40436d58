"""The repository's workflows and the workflow snippets of its docs, as the tests check them."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any

import yaml

from testing.markdown import DOCS
from testing.paths import REPO_ROOT

WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
# A fence may be indented (a block in a list item): its lines are, as much.
_YAML_BLOCK = re.compile(r"^( *)```yaml\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)
_STEPS_JOB = "on: push\njobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n"


@dataclass(frozen=True)
class Snippet:
    name: str
    """`<doc>:<line of the fence>`."""
    text: str
    """The snippet as a whole workflow: a list of steps is given a job of its own."""


def workflow_files() -> dict[str, str]:
    """`.github/workflows/<name>.yml` by its path in the repository."""
    return {
        str(path.relative_to(REPO_ROOT)): path.read_text()
        for path in sorted(WORKFLOWS_DIR.glob("*.y*ml"))
    }


def load_workflow(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((WORKFLOWS_DIR / name).read_text())
    return data


def doc_snippets() -> tuple[list[Snippet], list[Snippet]]:
    """The ```yaml blocks of the docs that are workflows or lists of steps (each as a workflow),
    and the others as they are."""
    snippets, others = [], []
    for doc in DOCS:
        text = doc.read_text()
        for block in _YAML_BLOCK.finditer(text):
            name = f"{doc.name}:{text.count(chr(10), 0, block.start()) + 1}"
            body = textwrap.dedent(block.group(2))
            data = yaml.safe_load(body)
            if isinstance(data, dict) and "jobs" in data:
                snippets.append(Snippet(name, body))
            elif isinstance(data, list) and all(_is_step(step) for step in data):
                snippets.append(Snippet(name, _STEPS_JOB + _indent(body, 6)))
            else:
                others.append(Snippet(name, body))
    return snippets, others


_ACTION_USES = re.compile(r"\./|scbench/evaluate@\S+|docker://\S+/evaluate:\S+")


def action_steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a workflow that use this action: `./` (in this repository),
    `scbench/evaluate@<ref>`, or its image itself (`docker://<registry>/.../evaluate:<version>`)."""
    return [
        step
        for job in workflow["jobs"].values()
        for step in job.get("steps", [])
        if _ACTION_USES.fullmatch(str(step.get("uses", "")))
    ]


def _is_step(item: object) -> bool:
    return isinstance(item, dict) and ("uses" in item or "run" in item)


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line if line.strip() else line for line in text.splitlines(True))
