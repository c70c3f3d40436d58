"""Fixtures of the results stage's tests."""

from pathlib import Path

import pytest

from scbench_ci.foundation.layout import PYTEST_LOG, SETUP_LOG


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """A run's log folder: a pytest log of 100 numbered lines and a setup log that names its
    error."""
    (tmp_path / PYTEST_LOG).write_text("".join(f"line {i}\n" for i in range(100)))
    (tmp_path / SETUP_LOG).write_text("resolving\nerror: no such package: nope\n")
    return tmp_path
