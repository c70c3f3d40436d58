"""The tests copy the program into a folder of their own and run it there, next to the file it
reads: `uv run settings.py` from a folder without a project, as in real SCBench problems."""

import shutil
import subprocess
import textwrap

import pytest
import yaml

SETTINGS = textwrap.dedent(
    """
    name: demo
    server:
      host: localhost
      ports: [8080, 8081]
    """
)


@pytest.fixture
def run(entrypoint_argv, tmp_path):
    entry = entrypoint_argv[-1]
    shutil.copy(entry, tmp_path / entry)
    (tmp_path / "settings.yaml").write_text(SETTINGS)

    def run(*args):
        return subprocess.run(
            [*entrypoint_argv, "get", "settings.yaml", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=20,
        )

    return run


def test_a_top_level_key(run):
    result = run("name")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == "demo"


def test_a_nested_key(run):
    result = run("server.host")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == "localhost"


def test_a_list_index(run):
    result = run("server.ports.1")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == 8081


@pytest.mark.functionality
def test_a_default_for_a_missing_key(run):
    result = run("server.tls", "--default", "off")
    assert result.returncode == 0, result.stderr
    assert yaml.safe_load(result.stdout) == "off"


@pytest.mark.error
def test_a_missing_key(run):
    result = run("server.tls")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: no key server.tls"
