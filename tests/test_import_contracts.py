"""The package's layers hold: `.importlinter`'s contracts, run by `lint-imports` as CI runs them.

A wrong-way import (a stage importing a later one, the trust layer importing the pipeline, a
cycle between folders, Docker or the network outside the executors and outputs.github) fails
here with import-linter's report of each import that breaks a contract.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testing.paths import REPO_ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_import_contracts_are_kept() -> None:
    lint = subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO_ROOT / ".importlinter"), "--no-cache"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
