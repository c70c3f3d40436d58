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
_FIND_UV = re.compile(r"^find_uv\(\) \{\n.*?^\}\n", re.MULTILINE | re.DOTALL)


def _find_uv(root: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """The script's `find_uv`, run on its own for a checkout at `root`, with a `python3` first on
    PATH that records how it is called and has no uv; and what it recorded."""
    tools = tmp_path / "tools"
    tools.mkdir()
    calls = tmp_path / "python3-calls"
    python3 = tools / "python3"
    python3.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(calls))}\nexit 1\n')
    python3.chmod(0o755)
    match = _FIND_UV.search(SCRIPT)
    assert match, f"no find_uv function in {PROVISION}"
    script = (
        'die() { echo "$*" >&2; exit 1; }\nlog() { echo "$*" >&2; }\n'
        f"ROOT={shlex.quote(str(root))}\n{match.group(0)}find_uv\n"
    )
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={"PATH": f"{tools}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
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


_VERIFY = re.compile(r"^verify_image\(\) \{\n.*?^\}\n", re.MULTILINE | re.DOTALL)


def _verify(tmp_path: Path, image_id: str) -> list[str]:
    """The script's `verify_image`, run on its own with a `docker` first on PATH that records
    how it is called and answers as a daemon with the image `image_id` would; the calls."""
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    calls = tmp_path / "docker-calls"
    docker = tools / "docker"
    docker.write_text(
        f'#!/bin/sh\necho "$1" >> {shlex.quote(str(calls))}\n'
        f'[ "$1" = image ] && echo "sha256:{image_id}"\n'
        '[ "$1" = run ] && echo "pytest 8.3.0"\nexit 0\n'
    )
    docker.chmod(0o755)
    match = _VERIFY.search(SCRIPT)
    assert match, f"no verify_image function in {PROVISION}"
    script = (
        'die() { echo "$*" >&2; exit 1; }\nlog() { echo "$*"; }\nnow() { date +%s; }\n'
        "elapsed() { echo 0s; }\nCHANGED=0\nIMAGE=test-image\n"
        f"VERIFIED_DIR={shlex.quote(str(tmp_path / 'verified'))}\n{match.group(0)}verify_image\n"
    )
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={"PATH": f"{tools}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    lines = calls.read_text().splitlines()
    calls.unlink()
    return lines


def test_the_smoke_test_runs_once_per_image(tmp_path: Path) -> None:
    """Issue #52: a warm `./scripts/example.sh` spent 9.1 s running it again."""
    assert _verify(tmp_path, "a" * 64) == ["image", "run"]
    assert _verify(tmp_path, "a" * 64) == ["image"]
    assert _verify(tmp_path, "b" * 64) == ["image", "run"]  # the image was rebuilt
