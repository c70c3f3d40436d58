"""Where the repository and its bundled examples are."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


EXAMPLES = REPO_ROOT / "examples"
CHECK_REPO_PROBLEMS = REPO_ROOT / "tests" / "data" / "check_repo" / "problems"
"""A problem repository's problems/ with a defect of each kind `check` finds."""
