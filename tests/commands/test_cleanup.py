"""`scbench-ci cleanup`: by default only this machine's runs, never what a run in progress made, and
only listed until `--yes`; one owner's leftovers with `--owner`, every run's with `--all`."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import docker
import pytest

from scbench_ci.cli import cleanup as cli
from scbench_ci.cli.main import parse_arguments
from scbench_ci.commands import cleanup
from scbench_ci.executors.docker import cleanup as docker_cleanup
from scbench_ci.executors.docker.container import RUN_LABEL
from scbench_ci.executors.docker.network import NO_ICC, isolated_network
from scbench_ci.executors.processes import MACHINE_LABEL, OWNER_LABEL, owner, this_host
from tests.executors.docker.test_executor import execute


def _cleanup(*argv: str) -> int:
    """The core, with the options `scbench-ci cleanup ARGV` makes."""
    return cleanup.run_cleanup(cli.options(parse_arguments(["cleanup", *argv])))


def _made(seconds_ago: float) -> str:
    """A creation time as the Docker API gives it (nanoseconds, UTC)."""
    when = datetime.now(UTC) - timedelta(seconds=seconds_ago)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z"


def _dead_pid() -> int:
    """The pid of a process of this host that has ended (and was reaped)."""
    done = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(done.stdout)


@dataclass
class _Made:
    """A fake run container or volume, as much of one as cleanup uses."""

    name: str
    labels: dict[str, str]
    created: str
    removed: bool = False

    @property
    def short_id(self) -> str:
        return self.name[:4]

    @property
    def attrs(self) -> dict[str, object]:
        return {"Created": self.created, "CreatedAt": self.created, "Labels": self.labels}

    def remove(self, **_: object) -> None:
        self.removed = True


class _Listing:
    def __init__(self, made: list[_Made]) -> None:
        self.made = made

    def list(self, filters: dict[str, list[str]], **_: object) -> list[_Made]:
        def matches(made: _Made, label: str) -> bool:
            key, equals, value = label.partition("=")
            return key in made.labels and (not equals or made.labels[key] == value)

        return [m for m in self.made if all(matches(m, label) for label in filters["label"])]


class _Client:
    def __init__(self, made: list[_Made]) -> None:
        self.containers = _Listing(made)
        self.volumes = _Listing([])
        self.networks = _Listing([])

    def close(self) -> None:
        pass


MACHINE = "this-machine"


def test_by_default_what_this_machine_s_ended_runs_made_goes_with_yes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = {RUN_LABEL: "r", MACHINE_LABEL: MACHINE}
    made = {
        "older": _Made("older", {RUN_LABEL: "r"}, _made(60)),  # an older version's: no machine
        "garbled": _Made("garbled", {**run, OWNER_LABEL: "garbled"}, _made(60)),
        "running": _Made("running", {**run, OWNER_LABEL: owner()}, _made(1)),
        "ended": _Made("ended", {**run, OWNER_LABEL: owner(_dead_pid())}, _made(1)),
        # This process started after the container was made: the pid was another's then.
        "reused": _Made("reused", {**run, OWNER_LABEL: owner()}, _made(10**7)),
        # This machine's id with another host name: two containers that share a home folder.
        "elsewhere": _Made("elsewhere", {**run, OWNER_LABEL: "elsewhere/1"}, _made(60)),
        "another's": _Made(
            "another's", {RUN_LABEL: "r", MACHINE_LABEL: "other", OWNER_LABEL: owner(1)}, _made(60)
        ),
        "bystander": _Made("bystander", {OWNER_LABEL: owner()}, _made(60)),  # not a run's
    }
    monkeypatch.setattr(docker_cleanup, "connect", lambda: _Client(list(made.values())))
    monkeypatch.setattr(docker_cleanup, "machine_id", lambda: MACHINE)

    assert _cleanup() == 0

    assert {name for name, m in made.items() if m.removed} == set()
    out = capsys.readouterr().out
    assert "would remove container ended (ende)\n" in out
    assert out.endswith(
        "3 container(s) would be removed; nothing was: run it again with --yes to remove them\n"
    )

    assert _cleanup("--yes") == 0

    assert {name for name, m in made.items() if m.removed} == {"garbled", "ended", "reused"}
    out = capsys.readouterr().out
    assert f"kept container running (runn): its run is in progress (process {os.getpid()} " in out
    assert (
        "kept container elsewhere (else): made by elsewhere/1, of another host, whose run may "
        "still be in progress"
    ) in out
    assert "2 container(s) of runs of other machines (or of versions without machine" in out
    assert out.endswith("removed 3 container(s)\n")


@pytest.mark.parametrize(
    ("argv", "removed"),
    [
        (["--owner", owner()], {"running", "reused"}),
        (["--all"], {"running", "reused", "elsewhere", "another's"}),
    ],
)
def test_owner_and_all_take_runs_in_progress_too(
    argv: list[str], removed: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = {RUN_LABEL: "r", MACHINE_LABEL: MACHINE}
    made = {
        "running": _Made("running", {**run, OWNER_LABEL: owner()}, _made(1)),
        "reused": _Made("reused", {**run, OWNER_LABEL: owner()}, _made(10**7)),
        "elsewhere": _Made("elsewhere", {**run, OWNER_LABEL: "elsewhere/1"}, _made(60)),
        "another's": _Made("another's", {RUN_LABEL: "r", OWNER_LABEL: "x/2"}, _made(60)),
    }
    monkeypatch.setattr(docker_cleanup, "connect", lambda: _Client(list(made.values())))
    monkeypatch.setattr(docker_cleanup, "machine_id", lambda: MACHINE)

    assert _cleanup(*argv, "--yes") == 0

    assert {name for name, m in made.items() if m.removed} == removed


@pytest.fixture
def owned(docker_client: docker.DockerClient, test_image: str) -> Iterator[dict[str, object]]:
    """A run container and a run volume of each of two made-up owners (never this session's
    runs, nor another session's): the owners' names, then theirs."""
    names = {who: f"scbench-test-{secrets.token_hex(4)}/{n}" for n, who in enumerate("ab", 1)}
    found: dict[str, object] = dict(names)
    for who, value in names.items():
        labels = {RUN_LABEL: "left-behind", OWNER_LABEL: value}
        found[f"{who} container"] = docker_client.containers.create(
            test_image, ["sleep", "infinity"], labels=labels
        )
        found[f"{who} volume"] = docker_client.volumes.create(labels=labels)
    yield found
    for key in ("a container", "b container", "a volume", "b volume"):
        with contextlib.suppress(docker.errors.NotFound):
            found[key].remove(force=True)  # type: ignore[attr-defined]


def test_owner_removes_only_that_owners_leftovers(
    owned: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    container, volume = owned["a container"], owned["a volume"]
    container.start()  # type: ignore[attr-defined]

    assert _cleanup("--owner", str(owned["a"]), "--yes") == 0

    assert capsys.readouterr().out == (
        f"removed container {container.name} ({container.short_id})\n"  # type: ignore[attr-defined]
        f"removed volume {volume.name}\n"  # type: ignore[attr-defined]
        "removed 1 container(s), 1 volume(s)\n"
    )
    for key in ("a container", "a volume"):
        with pytest.raises(docker.errors.NotFound):
            owned[key].reload()  # type: ignore[attr-defined]
    for key in ("b container", "b volume"):
        owned[key].reload()  # type: ignore[attr-defined]


def test_what_the_docker_executor_makes_names_its_owner(
    docker_client: docker.DockerClient, test_image: str, tmp_path: Path
) -> None:
    """This process's own run: what the hostile tests and cleanup go by. Its network is the
    runs' one, which is nobody's run's and stays."""
    mine = {"label": [RUN_LABEL, f"{OWNER_LABEL}={owner()}"]}
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(
                f"container {c.name}"
                for c in docker_client.containers.list(ignore_removed=True, filters=mine)
            )
            seen.update(f"volume {v.name}" for v in docker_client.volumes.list(filters=mine))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        result = execute(tmp_path, test_image, "import time; time.sleep(3)")
    finally:
        done.set()
        watcher.join()

    assert result.exit_code == 0
    assert {kind.split()[0] for kind in seen} == {"container", "volume"}
    assert owner() == f"{this_host()}/{os.getpid()}"
    assert docker_client.networks.list(filters={"label": f"{OWNER_LABEL}={owner()}"}) == []
    network = isolated_network(docker_client)  # the one the run took
    assert network.attrs["Options"] == NO_ICC
