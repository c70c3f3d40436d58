"""scripts/provision-docker.sh: the uv and uvx a local stand-in image gets are those of the
repository's .venv (scripts/bootstrap.sh installs them with scbench-ci), so nothing is installed
into the system Python; and `--help` lists every setting."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

from testing.images import PROVISION
from testing.paths import REPO_ROOT

SCRIPT = (REPO_ROOT / PROVISION).read_text()
HELPERS = 'die() { echo "$*" >&2; exit 1; }\nlog() { echo "$*" >&2; }\n'


def _tool(tools: Path, name: str, body: str) -> None:
    """An executable `name` in `tools`, a shell script of `body`."""
    tools.mkdir(exist_ok=True)
    (tools / name).write_text(f"#!/bin/sh\n{body}")
    (tools / name).chmod(0o755)


def _run_function(name: str, setup: str, tools: Path) -> subprocess.CompletedProcess[str]:
    """The script's function `name`, run on its own after `setup` (its variables), with the
    tools of `tools` first on PATH."""
    found = re.search(rf"^{name}\(\) \{{\n.*?^\}}\n", SCRIPT, re.MULTILINE | re.DOTALL)
    assert found, f"no {name} function in {PROVISION}"
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"{HELPERS}{setup}{found.group(0)}{name}\n"],
        env={"PATH": f"{tools}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


def _find_uv(root: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """The script's `find_uv`, run on its own for a checkout at `root`, with a `python3` first on
    PATH that records how it is called and has no uv; and what it recorded."""
    calls = tmp_path / "python3-calls"
    _tool(tmp_path / "tools", "python3", f'echo "$*" >> {shlex.quote(str(calls))}\nexit 1\n')
    run = _run_function("find_uv", f"ROOT={shlex.quote(str(root))}\n", tmp_path / "tools")
    return run, calls.read_text() if calls.exists() else ""


def test_the_stand_in_gets_the_uv_of_the_checkouts_venv(tmp_path: Path) -> None:
    venv_bin = tmp_path / "checkout" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    for name in ("uv", "uvx"):
        (venv_bin / name).write_text("#!/bin/sh\n")
        (venv_bin / name).chmod(0o755)
    run, python3_calls = _find_uv(tmp_path / "checkout", tmp_path)
    assert (run.returncode, run.stdout) == (0, f"{venv_bin}\n"), run.stderr
    assert python3_calls == ""


def test_without_a_venv_it_says_to_bootstrap_and_installs_nothing(tmp_path: Path) -> None:
    run, python3_calls = _find_uv(tmp_path / "checkout", tmp_path)
    assert run.returncode == 1
    assert "run scripts/bootstrap.sh first" in run.stderr
    assert python3_calls == ""


def test_help_lists_every_setting() -> None:
    settings = set(re.findall(r"^#   (SCBENCH_[A-Z_]+)", SCRIPT, re.MULTILINE))
    assert "SCBENCH_SKIP_VERIFY" in settings
    shown = subprocess.run(
        ["bash", str(REPO_ROOT / PROVISION), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert settings <= set(re.findall(r"SCBENCH_[A-Z_]+", shown))


def _verify(tmp_path: Path, image_id: str) -> list[str]:
    """The script's `verify_image`, run on its own with a `docker` first on PATH that records
    how it is called and answers as a daemon with the image `image_id` would; the calls."""
    calls = tmp_path / "docker-calls"
    _tool(
        tmp_path / "tools",
        "docker",
        f'echo "$1" >> {shlex.quote(str(calls))}\n[ "$1" = image ] && echo "sha256:{image_id}"\n'
        '[ "$1" = run ] && echo "pytest 8.3.0"\nexit 0\n',
    )
    setup = (
        "now() { date +%s; }\nelapsed() { echo 0s; }\nCHANGED=0\nIMAGE=test-image\n"
        f"VERIFIED_DIR={shlex.quote(str(tmp_path / 'verified'))}\n"
    )
    run = _run_function("verify_image", setup, tmp_path / "tools")
    assert run.returncode == 0, run.stderr
    lines = calls.read_text().splitlines()
    calls.unlink()
    return lines


def test_the_smoke_test_runs_once_per_image(tmp_path: Path) -> None:
    """Issue #52: a warm `./scripts/example.sh` spent 9.1 s running it again."""
    assert _verify(tmp_path, "a" * 64) == ["image", "run"]
    assert _verify(tmp_path, "a" * 64) == ["image"]
    assert _verify(tmp_path, "b" * 64) == ["image", "run"]  # the image was rebuilt
