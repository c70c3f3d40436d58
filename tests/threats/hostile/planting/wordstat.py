"""The broken wordstat, after trying to plant code where the test runner would pick it up, and to
change the problem's tests, assets and pytest.ini."""

import contextlib
import glob
import os
import sys
from pathlib import Path

from wordstat_base import main

HOOK = "import builtins; builtins.__import__('os')._exit(0)\n"
WORKSPACE = Path(__file__).resolve().parent


def attempts():
    for site in glob.glob("/scbench/runner/venv/lib/python3*/site-packages"):
        yield lambda site=site: Path(site, "zz_hostile.pth").write_text(HOOK)
        yield lambda site=site: Path(site, "sitecustomize.py").write_text(HOOK)
    yield lambda: Path("/uv-cache/runner/hostile").write_text(HOOK)
    yield lambda: Path("/scbench/runner/pytest_runner.py").write_text(HOOK)
    yield lambda: (WORKSPACE / "pytest.ini").write_text("[pytest]\naddopts = -p no:terminal\n")
    yield lambda: (WORKSPACE / "tests" / "conftest.py").write_text(HOOK)
    yield lambda: os.rename(WORKSPACE / "tests", WORKSPACE / "tests-gone")
    for path in WORKSPACE.glob("tests/**/*"):
        if path.is_file():
            yield lambda path=path: path.write_text("")


if __name__ == "__main__":
    for attempt in attempts():
        with contextlib.suppress(OSError):
            attempt()
    sys.exit(main())
