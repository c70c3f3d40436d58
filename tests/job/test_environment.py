from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.job.environment import default_environment, load_environment


def test_default_environment_is_scbench_python(tmp_path: Path) -> None:
    environment = default_environment(tmp_path)
    # SCBench's setup runs for every submission; without a requirements.txt, `uv add` makes the
    # project's .venv and fails, and SCBench goes on.
    assert environment.setup_commands == ("uv init", "uv add -r requirements.txt || true")
    assert environment.entrypoint("wordstat") == "uv run wordstat.py"
    assert environment.env == {
        "UV_CACHE_DIR": "/tmp/uv-cache",
        "PIP_CACHE_DIR": "/tmp/pip-cache-dir",
        "PIP_CONFIG_FILE": "/tmp/pip-conf",
    }

    (tmp_path / "requirements.txt").write_text("six\n")
    assert default_environment(tmp_path).setup_commands == ("uv init", "uv add -r requirements.txt")
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    assert default_environment(tmp_path).setup_commands == ("uv add -r requirements.txt",)


def test_environment_file_in_scbench_format(tmp_path: Path) -> None:
    path = tmp_path / "env.yaml"
    path.write_text(
        "type: docker\n"
        "docker: {image: 'python:3.12-slim', workdir: /workspace}\n"
        "environment: {env: {UV_CACHE_DIR: /tmp/uv, LEVEL: 3}}\n"
        "setup:\n  commands: [echo visible]\n  eval_commands: [pip install -r requirements.txt]\n"
        "commands: {command: python, entry_file: '{entry_file}.py', agent_command: python}\n"
    )
    environment = load_environment(path)
    assert environment.image == "python:3.12-slim"
    assert environment.env == {"UV_CACHE_DIR": "/tmp/uv", "LEVEL": "3"}
    assert environment.setup_commands == ("echo visible", "pip install -r requirements.txt")
    assert environment.entrypoint("main") == "python main.py"
    assert (environment.network, environment.user, environment.workdir) == (
        None,
        "1000:1000",
        "/workspace",
    )


def test_an_environment_file_s_network_user_and_workdir_are_taken(tmp_path: Path) -> None:
    """As SCBench's DockerConfig has them: `docker run --network`, `--user` (get_eval_user),
    `--workdir`; the user as numbers, so the workspace can be given to it."""
    path = tmp_path / "env.yaml"
    path.write_text(
        "docker: {image: 'python:3.12-slim', network: ' scbench ', user: '02000:3000', "
        "workdir: /app/work}\n"
    )
    environment = load_environment(path)
    assert (environment.network, environment.user, environment.workdir) == (
        "scbench",
        "2000:3000",
        "/app/work",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("type: vm\n", "type: must be docker or local"),
        ("docker: {image: ''}\n", "docker.image: must be an image name"),
        ("docker: {network: 3}\n", "docker.network: must be a network's name"),
        ("commands: {entry_file: main.py}\n", "commands.entry_file: must contain {entry_file}"),
        ("setup: {eval_commands: 'pip install'}\n", "setup.eval_commands: must be a list"),
        ("environment: {env: [A]}\n", "environment.env: must map variable names"),
        ("docker: {user: agent}\n", "docker.user: must be UID:GID in numbers"),
        ("docker: {user: 1000}\n", "docker.user: must be UID:GID in numbers"),
        ("docker: {user: '0:0'}\n", "docker.user: uid 0 is not allowed for the tests (root)"),
        ("docker: {user: '1000:0'}\n", "docker.user: gid 0 is not allowed for the tests (root)"),
        ("docker: {user: '1001:1001'}\n", "docker.user: uid 1001 is not allowed for the tests"),
        ("docker: {user: '65534:1'}\n", "docker.user: uid 65534 is not allowed for the tests"),
        ("docker: {user: '9999999999:1'}\n", "docker.user: uid 9999999999 is not allowed"),
        ("docker: {workdir: app}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: /app/}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: /app/../etc}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: //app}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: '/a b'}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: /}\n", "docker.workdir: must be an absolute, normalized"),
        ("docker: {workdir: /tmp/w}\n", "docker.workdir: '/tmp/w' is or is in /tmp"),
        ("docker: {workdir: /usr}\n", "docker.workdir: '/usr' is or is in /usr"),
        ("docker: {workdir: /scbench/x}\n", "docker.workdir: '/scbench/x' is or is in /scbench"),
        ("[\n", "invalid YAML"),
    ],
)
def test_bad_environment_files(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "env.yaml"
    path.write_text(text)
    with pytest.raises(ProblemError) as error:
        load_environment(path)
    assert str(error.value).startswith(f"{path}: {expected}")


def test_missing_environment_file(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="environment file does not exist"):
        load_environment(tmp_path / "nope.yaml")
