"""Test names (parametrize ids) that are hostile text, failing with the submission's output."""

import json
import subprocess
from pathlib import Path

import pytest

NAMES = json.loads((Path(__file__).parent / "names.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_name(entrypoint_argv, name):
    output = subprocess.run(entrypoint_argv, capture_output=True, timeout=60).stdout.decode()
    print(output)
    pytest.fail(output)
