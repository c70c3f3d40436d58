"""Probes of what a test's processes see: each test records, in the JSON report's metadata, what it
and the submission's processes observed. They pass whenever the probe could run."""

import json
import os
import shutil
import subprocess
import sys

import pytest

PROBE = [sys.executable, "-c", "import sys; sys.path.insert(0, '.'); import main; main.main()"]


def run(argv, cwd=None):
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    try:
        seen = json.loads(done.stdout)
    except ValueError:
        seen = done.stdout
    return {"code": done.returncode, "stdout": seen, "stderr": done.stderr}


def test_first_and_second_uv_run(entrypoint_argv, json_metadata):
    json_metadata["first"] = run([*entrypoint_argv, "report"])
    json_metadata["second"] = run([*entrypoint_argv, "report"])
    assert json_metadata["second"]["code"] == 0


def test_the_test_process(json_metadata, checkpoint_name):
    json_metadata["checkpoint"] = checkpoint_name
    json_metadata["argv0"] = os.path.basename(sys.argv[0])
    json_metadata["executable_is_first_python"] = shutil.which("python") == sys.executable
    json_metadata["view"] = run(PROBE)
    # Where the test process's modules say their bytecode is, and any bytecode prefix.
    json_metadata["bytecode"] = {
        "prefix": sys.pycache_prefix,
        "xoptions": sorted(sys._xoptions),
        "in_argv": [arg for arg in sys.orig_argv if "pycache_prefix" in arg],
        "elsewhere": sorted(
            name
            for name, module in list(sys.modules.items())
            if isinstance(getattr(module, "__cached__", None), str)
            and os.path.dirname(module.__cached__)
            != os.path.join(os.path.dirname(module.__file__), "__pycache__")
        ),
    }


def test_uv_run_from_a_copied_folder(entrypoint_argv, tmp_path, json_metadata):
    shutil.copy("main.py", tmp_path / "main.py")
    json_metadata["tmp_path"] = str(tmp_path)
    json_metadata["copied"] = run([*entrypoint_argv, "report"], cwd=tmp_path)


@pytest.mark.parametrize("python", ["python", "python3"])
def test_import_a_test_dependency_outside_the_project(python, tmp_path, json_metadata):
    json_metadata["import"] = run([python, "-c", "import yaml, sys; print(sys.prefix)"], cwd=tmp_path)


def test_uv_run_python_in_the_workspace(json_metadata):
    json_metadata["uv_run_python"] = run(
        ["uv", "run", "python", "-c", "import sys; print(sys.executable)"]
    )
