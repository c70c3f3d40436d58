"""SCBench's evaluation images, SCBench 1.0's (the default) and the paper runner's: each built
once here when it cannot be pulled and reused, and what runs in it is what runs in SCBench's:
Python 3.12, Node 22, g++, Rust and (1.0) the servers and tools its recipe adds, as 1000:1000 with
HOME=/tmp/agent_home, on a bridge network; what an image lacks of its recipe's programs is named."""

from __future__ import annotations

import io
import json
import time
import uuid
from pathlib import Path

import docker
import pytest

from scbench_ci.executors.base import ExecutionRequest, MissingProgram
from scbench_ci.executors.docker import image_build, image_recipe, image_versions
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.image_build import local_tag
from scbench_ci.executors.docker.image_recipe import (
    DEFAULT_IMAGE,
    PROGRAMS,
    RECIPES,
    SCBENCH_BASE,
    Recipe,
    recipe,
)
from scbench_ci.executors.docker.image_versions import ImageFacts, _parsed, image_facts
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.foundation.scbench_runner import PAPER, RUNNERS, V1_0
from testing.probes import PROBE_KEY, PROBE_OUTPUT, probe_command

# What the tests of a real problem (SCBench's dynamic_buffer) run: a program per language, built
# with SCBench's own commands; and a Python 3.12 statement.
_TOOLCHAINS = r"""
set -e
cd "$(mktemp -d)"
printf 'type Count = int\nprint("py", Count.__value__.__name__)\n' > p.py && python p.py
node -e 'console.log("js", 6 * 7)'
npm --version > /dev/null
printf '#include <iostream>\nint main(){std::cout<<"cpp "<<6*7<<std::endl;}\n' > c.cpp
g++ -std=c++17 -o c c.cpp && ./c
cargo new --lib --vcs none lib > /dev/null 2>&1
printf 'pub fn answer() -> i32 { 42 }\n' > lib/src/lib.rs
(cd lib && cargo build --release --quiet)
printf 'fn main(){println!("rs {}", lib::answer());}\n' > m.rs
rustc --edition 2021 --extern lib=lib/target/release/liblib.rlib -o m m.rs && ./m
redis-server --port 6399 --bind 127.0.0.1 --save '' --appendonly no --dir "$PWD" --daemonize yes \
  > /dev/null
for _ in $(seq 100); do redis-cli -p 6399 ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
echo "redis $(redis-cli -p 6399 ping)" && redis-cli -p 6399 shutdown nosave > /dev/null || true
java -version 2>&1 | grep -q -i jdk && echo java
printf 'syntax = "proto3";\nmessage M { int32 x = 1; }\n' > m.proto
protoc --python_out=. m.proto && test -s m_pb2.py && echo protoc
echo 'digraph { a -> b }' | dot -Tsvg | grep -q '<svg' && echo dot
git init -q repo && echo git
"""


def test_a_local_build_is_keyed_by_the_recipe_and_the_base(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tag = local_tag(recipe(), SCBENCH_BASE, "sha256:1")
    assert tag.startswith(f"{image_build.LOCAL_REPOSITORY}:")
    assert local_tag(recipe(), SCBENCH_BASE, "sha256:1") == tag
    assert local_tag(recipe(), SCBENCH_BASE, "sha256:2") != tag
    assert local_tag(recipe(), "python:3.12-slim", "sha256:1") != tag
    assert local_tag(recipe("paper"), SCBENCH_BASE, "sha256:1") != tag
    monkeypatch.setattr(Recipe, "dockerfile", lambda self: b"FROM scratch\n")
    assert local_tag(recipe(), SCBENCH_BASE, "sha256:1") != tag


def test_each_runner_has_its_recipe_and_its_own_name() -> None:
    assert {runner.image_recipe for runner in RUNNERS.values()} == set(RECIPES)
    assert recipe().name == V1_0.image_recipe == "1.0"
    assert recipe(PAPER.image_recipe).name == "paper"
    assert recipe().published == DEFAULT_IMAGE
    assert recipe("paper").published == f"{DEFAULT_IMAGE}-paper"
    digests = {name: image_recipe.recipe_digest(name) for name in RECIPES}
    assert len(set(digests.values())) == len(RECIPES)
    assert image_recipe.recipe_digest() == digests["1.0"]
    # The paper's recipe is the one scbench-ci built before there were two: its local builds
    # keep their tag (the Dockerfile's bytes as they were).
    assert digests["paper"] == ("4a85e1df7b4d43aac350820087c6ac8be78a990648df7c126258edf601499194")


_SHARED_STEPS = (
    f"ARG BASE={SCBENCH_BASE}",
    "ENV HOME=/tmp/agent_home",
    "ENV NODE_VERSION=22.21.1",
    "nvm-sh/nvm/v0.39.7/install.sh",
    "https://sh.rustup.rs",
    "groupadd -g 1000 agent",
    'useradd -m -u 1000 -g 1000 -d "$HOME" -s /bin/bash agent',
    'chown -R agent:agent "$HOME" /workspace',
    "ENV CARGO_HOME=$HOME/.cargo",
)


def test_the_paper_recipe_is_the_paper_runner_s_layer() -> None:
    """The steps of the paper runner's setup_base.docker.j2 that decide what the tests see."""
    text = recipe("paper").dockerfile().decode()
    for step in (
        *_SHARED_STEPS,
        "apt-get install -y build-essential",
        "apt-get install -y bzip2 tar gzip zip unzip curl ca-certificates gnupg procps",
    ):
        assert step in text, step
    assert "redis-server" not in text


def test_the_1_0_recipe_is_scbench_1_0_s_layer() -> None:
    """SCBench 1.0's layer: everything without recommendations, the programs its tests may use,
    MinIO's server, the user in the group docker; and each program it adds is probed for."""
    text = recipe().dockerfile().decode()
    for step in (
        *_SHARED_STEPS,
        "apt-get install -y --no-install-recommends build-essential",
        "https://dl.min.io/server/minio/release/linux-amd64/minio",
        "(getent group docker >/dev/null || groupadd docker)",
        "usermod -aG docker agent",
        "rm -rf /var/lib/apt/lists/*",
    ):
        assert step in text, step
    words = set(text.split())
    for package in (
        "default-jre-headless",
        "netcat-openbsd",
        "protobuf-compiler",
        "git",
        "graphviz",
        "rabbitmq-server",
        "redis-server",
        "docker-cli",
        "docker-compose-plugin",
        "libnss3",
        "libgbm1",
        "fonts-liberation",
    ):
        assert package in words, package
    names = [program.name for program in recipe().programs]
    assert len(names) == len(set(names))
    assert set(names) >= {"java", "protoc", "redis-server", "rabbitmq-server", "minio"}
    assert {p.name for p in recipe("paper").programs} < set(names)
    assert {p.name for p in PROGRAMS} == set(names)


@pytest.fixture(params=list(RECIPES))
def each_default(request: pytest.FixtureRequest) -> tuple[Recipe, str]:
    """Each recipe with its default image as the runs have it."""
    fixture = "evaluation_image" if request.param == "1.0" else "paper_evaluation_image"
    return recipe(request.param), request.getfixturevalue(fixture)


@pytest.mark.serial
def test_the_default_is_had_once_then_reused(
    docker_client: docker.DockerClient, each_default: tuple[Recipe, str]
) -> None:
    chosen, reference = each_default
    echo = io.StringIO()
    started = time.monotonic()
    again = image_build.default_image(docker_client, echo, chosen)
    reused_s = time.monotonic() - started

    assert again.reference == reference
    assert again.name == chosen.published
    assert echo.getvalue() == ""  # neither pulled nor built
    assert reused_s < 5
    if again.built_from is not None:  # built here: it says how
        assert again.reference == local_tag(
            chosen, SCBENCH_BASE, str(docker_client.images.get(SCBENCH_BASE).id)
        )
        assert again.toolchains in image_build.TOOLCHAINS
        assert (again.note is not None) == (again.toolchains == "registries")


@pytest.mark.serial
def test_its_login_path_and_tools_are_read_once_per_image(
    docker_client: docker.DockerClient, evaluation_image: str
) -> None:
    image = docker_client.images.get(evaluation_image)
    image_id = str(image.id)
    facts = image_facts(docker_client, image_id, "/usr/local/bin:/usr/bin:/bin")

    # Debian's profile for a user who is not root, as `bash -l` in SCBench's image has it.
    assert facts.path.endswith("/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games")
    assert facts.versions["python"].startswith("Python 3.12.")
    assert facts.versions["node"].startswith("v22.")
    assert set(facts.versions) == {"python", "node", "npm", "g++", "rustc", "cargo"}
    assert facts.stdlib == "/usr/local/lib/python3.12"
    # Every program of SCBench 1.0's image, MinIO's server where dl.min.io could be reached.
    lacking = {program.program for program in recipe().missing(facts.programs)}
    built_here = (image.labels or {}).get(image_build.TOOLCHAINS_LABEL) == "registries"
    assert lacking <= ({"minio"} if built_here else set())
    started = time.monotonic()
    assert image_facts(docker_client, image_id, "/bin") is facts
    assert time.monotonic() - started < 0.1  # no container: the cache by id
    # Another process reads what the probe printed from the volume that keeps it, and parses it
    # as the probe's own output.
    image_versions._known.clear()
    kept = docker_client.volumes.get(image_versions._volume_name(image_id)).attrs["Labels"]
    assert kept[image_versions.IMAGE_LABEL] == image_id
    assert image_facts(docker_client, image_id, "/bin") == facts
    assert image_versions._parsed(kept[image_versions.OUTPUT_LABEL], "/bin") == facts


def test_the_paper_image_lacks_what_1_0_adds(
    docker_client: docker.DockerClient, paper_evaluation_image: str
) -> None:
    image_id = str(docker_client.images.get(paper_evaluation_image).id)
    facts = image_facts(docker_client, image_id, "/usr/local/bin:/usr/bin:/bin")

    assert recipe("paper").missing(facts.programs) == ()
    lacking = {program.program for program in recipe().missing(facts.programs)}
    assert lacking == {p.name for p in recipe().programs} - {
        p.name for p in recipe("paper").programs
    }


def test_a_versions_volume_that_is_not_ours_is_not_read(
    docker_client: docker.DockerClient,
) -> None:
    image_id = f"sha256:{uuid.uuid4().hex}{uuid.uuid4().hex}"
    name = image_versions._volume_name(image_id)
    docker_client.volumes.create(name, labels={image_versions.OUTPUT_LABEL: "python=forged\n"})
    try:
        assert image_versions._kept(docker_client, image_id) is None
    finally:
        docker_client.volumes.get(name).remove(force=True)


def test_what_an_image_prints_is_taken_only_as_what_it_should_be() -> None:
    text = "python=Python 3.12.1\x1b[31m\nnode=" + "v" * 500 + "\nother=1\nrustc=\n"
    assert _parsed(text, "/bin") == ImageFacts(
        "/bin", {"python": "Python 3.12.1[31m", "node": "v" * 200}
    )
    # Only the programs probed for; which ones the image has is known once the probe finished.
    assert _parsed("has=redis-server\nhas=evil\nhas=java\n", "/bin").programs is None
    done = _parsed("has=redis-server\nhas=evil\nhas=java x\nprobed=done\n", "/bin")
    assert done.programs == {"redis-server"}
    assert recipe("paper").missing(None) == recipe().missing(None) == ()
    assert MissingProgram("minio", recipe().programs[-1].without) in recipe().missing(done.programs)
    assert _parsed("PATH=/a:/b c\n", "/bin").path == "/bin"
    # A run mounts the cached copy over the stdlib folder: never a system folder, a relative
    # path or one that climbs.
    for folder in ("/usr/local/lib/python3.12", "/usr/lib/python3.11", "/opt/py/lib/python3.13"):
        assert _parsed(f"stdlib={folder}\n", "/bin").stdlib == folder
    for folder in (
        "/usr",
        "/usr/lib",
        "/python3.12",
        "/usr/python3.12",
        "usr/lib/python3.12",
        "/usr/lib/../python3.12",
        "/usr/./lib/python3.12",
        "/usr/lib/python3.12/",
        "/usr/lib/python3.12 /etc",
        "/usr/lib/python2.7",
        "/scbench/x/python3.12",
        "/workspace/lib/python3.12",
        "/tmp/agent_home/lib/python3.12",
        "/root/.local/share/uv/python/lib/python3.12",
        "",
    ):
        assert _parsed(f"stdlib={folder}\n", "/bin").stdlib is None, folder
    assert _parsed("PATH=relative:/b\n", "/bin").path == "/bin"
    assert _parsed("PATH=/usr/local/cargo/bin:/usr/bin\n", "/bin").path == (
        "/usr/local/cargo/bin:/usr/bin"
    )


def test_the_tests_run_where_scbench_s_run(tmp_path: Path, evaluation_image: str) -> None:
    """No --image: Python 3.12, Node, g++ and Rust as a real problem's tests use them, and the
    programs SCBench 1.0's image adds (a Redis server, Java, protoc, Graphviz, git), as 1000:1000
    with SCBench's HOME, on a bridge network; and results say what ran, and what it lacks."""
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    code = f"""
import json, os, subprocess
done = subprocess.run(["bash", "-c", {_TOOLCHAINS!r}], capture_output=True, text=True)
with open(PROBE_OUTPUT, "w") as out:
    json.dump({{"code": done.returncode, "out": done.stdout, "err": done.stderr[-2000:],
               "ids": [os.getuid(), os.getgid()], "home": os.environ["HOME"],
               "cwd": os.getcwd(), "path": os.environ["PATH"],
               "networks": open("/proc/net/route").read().count("\\n")}}, out)
"""
    result = DockerExecutor(DockerSettings()).execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=(),
            command=probe_command(workspace, code),
            session_timeout_s=600,
            seal_key=PROBE_KEY,
            echo=None,
        )
    )
    seen = json.loads((workspace / PROBE_OUTPUT).read_text())

    assert seen["code"] == 0, seen["err"]
    assert seen["out"].split("\n") == [
        *("py int", "js 42", "cpp 42", "rs 42"),
        *("redis PONG", "java", "protoc", "dot", "git", ""),
    ]
    assert seen["ids"] == [1000, 1000]
    assert (seen["home"], seen["cwd"]) == ("/tmp/agent_home", "/workspace")
    assert seen["path"].endswith("/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games")
    assert seen["networks"] > 1  # a route besides the header line: the bridge is there
    assert result.image is not None
    assert result.image.name == DEFAULT_IMAGE
    assert result.image.versions["python"].startswith("Python 3.12.")
    if result.image.toolchains == "registries":
        assert result.image.note == image_build.REGISTRIES_NOTE
        assert image_build.REGISTRIES_NOTE in (logs / "setup.log").read_text()
    assert {each.program for each in result.image.missing} <= {"minio"}


def test_a_run_of_the_paper_s_runner_runs_in_the_paper_s_image(
    tmp_path: Path, paper_evaluation_image: str
) -> None:
    """The request's runner picks the image (`ScbenchRunner.image_recipe`), and what the image
    lacks is counted against that runner's recipe: nothing, for the paper's."""
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    code = "import shutil\nopen(PROBE_OUTPUT, 'w').write(str(shutil.which('redis-server')))\n"
    result = DockerExecutor(DockerSettings()).execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=(),
            command=probe_command(workspace, code),
            session_timeout_s=600,
            seal_key=PROBE_KEY,
            echo=None,
            scbench=PAPER,
        )
    )

    assert (workspace / PROBE_OUTPUT).read_text() == "None"
    assert result.image is not None
    assert result.image.name == recipe("paper").published
    assert result.image.missing == ()


def test_a_build_s_output_is_shown_inert_and_its_error_in_one_message() -> None:
    echo = io.StringIO()
    events = [
        {"stream": "Step 1/2 : FROM base\n"},
        {"stream": " ---> abc\n"},
        {"stream": "\x1b[91mcurl: (6) Could not resolve host\x1b[0m\n"},
        {"stream": "bell \x07 here\n"},
        {"error": "The command '/bin/sh -c curl ...' returned a non-zero code: 6"},
    ]
    failure = image_build._follow(events, echo)

    assert echo.getvalue() == "  Step 1/2 : FROM base\n"
    assert failure == (
        "returned a non-zero code: 6 (curl: (6) Could not resolve host | bell \\x07 here)"
    )
    assert image_build._follow([{"stream": "Step 1/1 : FROM base\n"}], None) is None
