"""release.yml's steps, run here where they can run (the version check, the release notes, the
build, the image's smoke test, action.yml pointed at the image and the tags moved, against a
local origin); pushing to ghcr.io and PyPI and making the GitHub release cannot, and are checked by
actionlint (tests/testing/test_actionlint.py) and below for what they are given."""

from __future__ import annotations

import platform
import re
import subprocess
import tarfile
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from scbench_ci import __version__
from scbench_ci.executors.docker.image_recipe import RECIPES
from testing.local_steps import run_step
from testing.paths import REPO_ROOT
from tests.release.conftest import PYTHON_FIRST, RELEASE, copy_repository

MAJOR = f"v{__version__.split('.')[0]}"
IMAGES = REPO_ROOT / "scbench_ci" / "images"


@pytest.fixture
def image_name() -> str:
    """A repository of a test's own: tests running side by side never share a tag."""
    return f"ghcr.io/scbench-test-{uuid.uuid4().hex[:8]}/evaluate"


def test_the_tag_must_be_the_package_version(checkout: Path) -> None:
    def version_step(tag: str, named: str = "") -> tuple[int, str, dict[str, str]]:
        context = {
            "github.ref_name": tag,
            "github.repository_owner": "SCBench-Test",
            "env.EVALUATION_IMAGE": named,
        }
        run = run_step(
            RELEASE, "prepare", "version", cwd=checkout, context=context, env=PYTHON_FIRST
        )
        return run.exit_code, run.output, run.outputs

    code, output, outputs = version_step(f"v{__version__}")
    assert code == 0, output
    assert outputs == {
        "version": __version__,
        "image": "ghcr.io/scbench-test/evaluate",
        "evaluation_image": "ghcr.io/scbench-test/evaluate-env:python3.12",
    }
    # The workflow's EVALUATION_IMAGE names SCBench's evaluation image where it is published.
    code, output, outputs = version_step(f"v{__version__}", "registry.example/env:3.12")
    assert (code, outputs["evaluation_image"]) == (0, "registry.example/env:3.12")
    code, output, outputs = version_step("v99.0.0")
    assert code == 1
    assert f"::error::the tag v99.0.0 is not v{__version__}, the package's version" in output


def test_the_release_notes_are_the_versions_changelog_section(checkout: Path) -> None:
    changelog = checkout / "CHANGELOG.md"
    text = changelog.read_text()
    unreleased = text.split("\n## Unreleased\n", 1)[1].split("\n## ", 1)[0]
    # Releasing: the Unreleased changes get the version's heading.
    changelog.write_text(text.replace("\n## Unreleased\n", f"\n## {__version__} - 2026-01-31\n"))

    def notes_step(version: str) -> tuple[int, str]:
        context = {"steps.version.outputs.version": version}
        run = run_step(RELEASE, "prepare", "notes", cwd=checkout, context=context, env=PYTHON_FIRST)
        return run.exit_code, run.output

    assert notes_step(__version__) == (0, "")
    assert (checkout / "release-notes.md").read_text() == unreleased.strip() + "\n"
    code, output = notes_step("99.0.0")
    assert code == 1
    assert "no section `## 99.0.0`" in output


@pytest.mark.slow  # the build step's isolated `python -m build`: about 15 s
def test_the_build_step_makes_a_wheel_and_an_sdist_that_carry_the_whole_package(
    built_dist: Path,
) -> None:
    wheel = built_dist / f"scbench_ci-{__version__}-py3-none-any.whl"
    sdist = built_dist / f"scbench_ci-{__version__}.tar.gz"
    assert sorted(built_dist.iterdir()) == sorted([sdist, wheel])
    package = {
        str(path.relative_to(REPO_ROOT))
        for path in (REPO_ROOT / "scbench_ci").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {
        "scbench_ci/schema/results.schema.json",
        "scbench_ci/outputs/templates/summary.md.j2",
    } < package
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"scbench_ci-{__version__}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert {name for name in names if not name.startswith(info)} == package
    assert f"\nVersion: {__version__}\n" in metadata
    assert "scbench-ci = scbench_ci.cli.main:main" in entry_points
    with tarfile.open(sdist) as archive:
        root = f"scbench_ci-{__version__}/"
        in_sdist = {name.removeprefix(root) for name in archive.getnames()}
    assert package | {"pyproject.toml", "README.md"} <= in_sdist


def test_the_release_image_is_built_on_a_base_pinned_by_digest_for_both_platforms() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    (base,) = re.findall(r"^ARG BASE_IMAGE=(\S+)$", dockerfile, re.MULTILINE)
    assert re.fullmatch(r"python:3\.12-slim@sha256:[0-9a-f]{64}", base)
    assert re.findall(r"^FROM (\S+)", dockerfile, re.MULTILINE) == ["${BASE_IMAGE}"] * 2
    (build,) = [
        step["with"]
        for step in RELEASE["jobs"]["image"]["steps"]
        if step.get("uses", "").startswith("docker/build-push-action@")
    ]
    # The Dockerfile's pinned base; only the name the evaluation image is published under.
    assert build["build-args"] == "EVALUATION_IMAGE=${{ needs.prepare.outputs.evaluation_image }}"
    assert (build["push"], build["platforms"]) == (True, "${{ env.PLATFORMS }}")
    assert RELEASE["env"]["PLATFORMS"] == "linux/amd64,linux/arm64"
    assert (
        build["tags"] == "${{ needs.prepare.outputs.image }}:${{ needs.prepare.outputs.version }}"
    )


def test_the_evaluation_images_are_scbench_s_recipes_published_before_the_package() -> None:
    job = RELEASE["jobs"]["evaluation-image"]
    (build,) = [
        step["with"]
        for step in job["steps"]
        if step.get("uses", "").startswith("docker/build-push-action@")
    ]
    # Each recipe under the name a run looks for (image_recipe.Recipe.published).
    recipes = {each["recipe"]: each["suffix"] for each in job["strategy"]["matrix"]["include"]}
    assert recipes == {name: recipe.tag_suffix for name, recipe in RECIPES.items()}
    for name in recipes:
        assert (IMAGES / f"evaluation-{name}.Dockerfile").is_file()
        assert RECIPES[name].dockerfile_name == f"evaluation-{name}.Dockerfile"
    assert build["file"] == "scbench_ci/images/evaluation-${{ matrix.recipe }}.Dockerfile"
    assert build["build-args"] == "TOOLCHAINS=upstream"  # nvm and rustup, as SCBench's
    name = "${{ needs.prepare.outputs.evaluation_image }}${{ matrix.suffix }}"
    assert build["tags"].splitlines() == [name, f"{name}-${{{{ needs.prepare.outputs.version }}}}"]
    assert "evaluation-image" in RELEASE["jobs"]["pypi"]["needs"]


def test_publishing_waits_for_the_image_and_only_publishing_may_sign_in_to_pypi() -> None:
    jobs = RELEASE["jobs"]
    assert set(jobs["pypi"]["needs"]) == {"prepare", "package", "image", "evaluation-image"}
    assert set(jobs["action"]["needs"]) == {"prepare", "image"}
    assert {"pypi", "action"} <= set(jobs["release"]["needs"])
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    (publish,) = jobs["pypi"]["steps"][-1:]
    assert publish["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    signing_in = [name for name, job in jobs.items() if "id-token" in job.get("permissions", {})]
    assert signing_in == ["pypi"]
    assert RELEASE["permissions"] == {"contents": "read"}


def _this_platform() -> str:
    return {"x86_64": "linux/amd64", "aarch64": "linux/arm64"}[platform.machine()]


@pytest.fixture
def tagged_image(
    docker_client: docker.DockerClient, action_image: str, image_name: str
) -> Iterator[str]:
    """The action's image under the name the image job pushes it by, as if pulled."""
    image = docker_client.images.get(action_image)
    image.tag(image_name, __version__)
    image.tag(image_name, "99.0.0")
    yield image_name
    for tag in (__version__, "99.0.0"):
        docker_client.images.remove(f"{image_name}:{tag}")


def test_the_image_has_no_build_tools(
    docker_client: docker.DockerClient, action_image: str
) -> None:
    probe = (
        "import importlib.util, os; "
        "print([m for m in ('pip', 'setuptools', 'wheel') if importlib.util.find_spec(m)], "
        "sorted(os.listdir('/opt/scbench-ci')), os.path.exists('/src'))"
    )
    output = docker_client.containers.run(
        action_image, ["-c", probe], entrypoint=["/opt/venv/bin/python"], remove=True
    )
    assert output.decode().strip() == "[] ['entrypoint.py'] False"


def test_the_smoke_step_accepts_the_image_of_its_version_only(
    tagged_image: str, tmp_path: Path
) -> None:
    def smoke(version: str) -> tuple[int, str]:
        context = {
            "needs.prepare.outputs.image": tagged_image,
            "needs.prepare.outputs.version": version,
        }
        env = {"PLATFORMS": _this_platform()}
        run = run_step(RELEASE, "image", "smoke", cwd=tmp_path, context=context, env=env)
        return run.exit_code, run.output

    assert smoke(__version__) == (0, "")
    code, output = smoke("99.0.0")  # the same image under another version's tag
    assert code == 1
    assert f"prints 'scbench-ci {__version__}', not 'scbench-ci 99.0.0'" in output


def _git(cwd: Path, *argv: str) -> str:
    identity = ("-c", "user.name=test", "-c", "user.email=test@example.com")
    done = subprocess.run(
        ["git", *identity, *argv], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("earlier_tags", "moves_major"),
    [
        ([f"{MAJOR}.0.0"], True),  # the latest of its major version: v<major> follows it
        ([f"{MAJOR}.0.0", f"{MAJOR}.99.0"], False),  # a fix of an older line: v<major> stays
    ],
)
@pytest.mark.slow
def test_the_action_job_tags_a_release_commit_that_runs_the_image(
    tmp_path: Path, image_name: str, earlier_tags: list[str], moves_major: bool
) -> None:
    tag = f"v{__version__}"
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "--quiet", "--bare", str(origin))
    main = copy_repository(tmp_path / "main")
    _git(main, "init", "--quiet")
    _git(main, "add", "--all")
    _git(main, "commit", "--quiet", "--message", "main")
    for name in [*earlier_tags, MAJOR, tag]:
        _git(main, "tag", name)
    _git(main, "push", "--quiet", str(origin), "--tags")
    tagged = _git(main, "rev-parse", "HEAD")
    # actions/checkout with fetch-depth 0: the tag's commit, every tag, origin the repository.
    checkout = tmp_path / "checkout"
    _git(tmp_path, "clone", "--quiet", str(origin), str(checkout))
    _git(checkout, "checkout", "--quiet", "--detach", tag)

    for step, context in (
        ("point", {"needs.prepare.outputs.image": image_name}),
        ("check", {}),
        ("tag", {"github.ref_name": tag}),
    ):
        run = run_step(RELEASE, "action", step, cwd=checkout, context=context, env=PYTHON_FIRST)
        assert run.exit_code == 0, f"{step}:\n{run.output}"

    release = _git(origin, "rev-parse", f"{tag}^{{commit}}")
    assert _git(origin, "rev-parse", f"{release}^") == tagged
    assert _git(origin, "diff", "--name-only", tagged, release) == "action.yml"
    action_yml = _git(origin, "show", f"{release}:action.yml")
    assert f"\n  image: docker://{image_name}:{__version__}\n" in action_yml
    assert _git(origin, "rev-parse", f"{MAJOR}^{{commit}}") == (release if moves_major else tagged)
