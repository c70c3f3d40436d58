"""Containers made ahead of need, and removed behind it.

While one evaluation runs, the next one's container is created, started and given what does not
depend on its submission (its volumes, the cache mounts, the runner's folders and script, the
tests user's home), so that a run waits only for its workspace to go in. Each container serves
exactly one evaluation: `take` hands a prepared container out once and forgets it, and after the
run it is removed, off the run's path, by one thread that removes in the order given. `close`
removes what was prepared and not used, waits for every removal, and returns only then. Every
container carries the run's labels (`container.labels`): what a killed process leaves,
`scbench-ci cleanup` finds by them.

A container is prepared only for a run that is expected (`expect`): the jobs of a run not yet
begun, or, for a session, an unknown number; and no more at once than the runs side by side
plus one. It is prepared with the shape of the run that was just taken (a loop over one
checkpoint takes the same shape every time); a run of another shape makes its own. When the
shape says how its tests' process starts (`warm_runner.py`), that process is started as soon
as the container is; a run that starts its tests otherwise stops it and takes the container.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from docker.errors import DockerException
from docker.models.containers import Container

from scbench_ci.executors.docker.cache_use import Caches
from scbench_ci.executors.docker.container import Containers, run_name
from scbench_ci.executors.docker.container_layout import TestsPlace
from scbench_ci.executors.docker.network import routed
from scbench_ci.executors.docker.transfer import prepare_container
from scbench_ci.executors.docker.warm_runner import WarmRunner, WarmStart
from scbench_ci.foundation.signals import Terminated


@dataclass(frozen=True)
class Shape:
    """What a run's container is made from before its submission is known: a run may take a
    container prepared for an equal shape."""

    image: str
    """As the run names it (`Containers.image`)."""
    image_id: str
    path: str
    """The PATH setup and the tests get (`Containers.path`)."""
    caches: Caches
    """The cached environments mounted (read-only)."""
    network_mode: str | None
    place: TestsPlace
    installs_runner: bool
    """Whether the run installs the test runner itself (no cached one): its uv cache folder."""
    blocked: tuple[str, ...] = ()
    """What the container cannot reach on its network (network.routed); none: no routes."""
    warm: WarmStart | None = None
    """How its tests' process starts, when that is started with the container."""

    @property
    def container(self) -> Shape:
        """What the container itself is made from."""
        return replace(self, warm=None)


@dataclass(frozen=True)
class Prepared:
    """A container made for one run: created, started, its volumes mounted and the runner's
    folders in; the run's workspace is all it lacks."""

    name: str
    run_id: str
    container: Container
    shape: Shape
    warm: WarmRunner | None = None
    """Its tests' process, started and waiting for its key (`shape.warm`)."""

    def cold(self) -> Prepared:
        """The same container, its tests to be started as usual (what was started of them is
        gone)."""
        if self.warm is not None:
            self.warm.stop_before_another()
        return replace(self, warm=None)

    def discard(self) -> None:
        """It is removed: what was started of its tests ends with it."""
        if self.warm is not None:
            self.warm.stop()


def prepare(containers: Containers, shape: Shape) -> Prepared:
    """A container of `shape`, made now; on any failure (Ctrl-C included) what was made of it
    is removed before the error goes on."""
    run_id = uuid.uuid4().hex
    name = run_name(run_id)
    try:
        limits = containers.folder_limits()
        volumes = containers.create_volumes(name, run_id, limits, shape.place.workdir)
        container = containers.create(
            name,
            run_id,
            [*volumes, *shape.caches.mounts()],
            limits,
            network_mode=shape.network_mode,
            **(routed(list(shape.blocked)) if shape.blocked else {}),
        )
        # A volume in memory is there once the container runs, not before.
        container.start()
        prepare_container(container, installs_runner=shape.installs_runner, place=shape.place)
    except BaseException as error:
        signalled = isinstance(error, KeyboardInterrupt | Terminated)
        containers.remove(name, volumes=True, after_signal=signalled)
        raise
    return Prepared(name, run_id, container, shape, _started(container, shape.warm))


def _started(container: Container, warm: WarmStart | None) -> WarmRunner | None:
    """The tests' process started ahead; None when it is not (or cannot be: the run then starts
    it as usual)."""
    if warm is None:
        return None
    try:
        return WarmRunner(container, warm)
    except DockerException:
        return None


class ContainerPool:
    """Prepared containers of one executor, and the removal of used ones (see the module)."""

    def __init__(self, containers: Callable[[Shape], Containers]) -> None:
        """`containers`: how the containers of a shape are made and removed (on this
        executor's client, confined by its settings)."""
        self._containers = containers
        self._changed = threading.Condition()
        self._ready: list[Prepared] = []
        self._preparing = 0
        self._pending: int | None = 0
        self._size = 0
        self._closed = False
        self._removals: queue.Queue[tuple[Containers, str] | None] = queue.Queue()
        self._remover = threading.Thread(
            target=self._remove_in_turn, name="scbench-remover", daemon=True
        )
        self._remover.start()

    def expect(self, runs: int | None, side_by_side: int) -> None:
        """`runs` more runs will take a container (None: an unknown number, until `close`),
        at most `side_by_side` at once."""
        with self._changed:
            self._pending = None if runs is None or self._pending is None else self._pending + runs
            self._size = max(self._size, side_by_side + 1)

    def take(self, shape: Shape) -> Prepared:
        """A container of `shape` no run had: a prepared one, else one made now; then the next
        one is prepared, when a run is expected to want it. A container prepared with another
        start of its tests comes with none started."""
        with self._changed:
            if self._pending is not None:
                self._pending = max(0, self._pending - 1)
            found = next((one for one in self._ready if one.shape == shape), None)
            found = found or next(
                (one for one in self._ready if one.shape.container == shape.container), None
            )
            if found is not None:
                self._ready.remove(found)
        if found is None:
            found = prepare(self._containers(shape), shape)
        elif found.shape != shape:
            found = replace(found.cold(), shape=shape)
        self._prepare_next(shape)
        return found

    def remove(self, prepared: Prepared) -> None:
        """Remove a container taken from this pool (and its volumes), off the caller's path."""
        prepared.discard()
        self._removals.put((self._containers(prepared.shape), prepared.name))

    def drop(self, shape: Shape) -> None:
        """Remove now every prepared container of `shape` (its cached environment is being
        forgotten)."""
        with self._changed:
            dropped = [one for one in self._ready if one.shape.container == shape.container]
            self._ready = [one for one in self._ready if one not in dropped]
        for one in dropped:
            one.discard()
            self._containers(one.shape).remove(one.name, volumes=True)

    def close(self) -> None:
        """Prepare no more; remove what was prepared and not taken; return once every removal
        asked of this pool is done."""
        with self._changed:
            self._closed = True
            self._changed.wait_for(lambda: self._preparing == 0)
            unused, self._ready = self._ready, []
        for one in unused:
            self.remove(one)
        self._removals.put(None)
        self._remover.join()

    def _prepare_next(self, shape: Shape) -> None:
        with self._changed:
            if self._closed:
                return
            held = len(self._ready) + self._preparing
            wanted = self._size - held
            if self._pending is not None:
                wanted = min(wanted, self._pending - held)
            if wanted <= 0 and self._pending != 0:
                # Full of other shapes: the oldest of another makes room for this one.
                other = next(
                    (one for one in self._ready if one.shape.container != shape.container), None
                )
                if other is None:
                    return
                self._ready.remove(other)
                self.remove(other)
            elif wanted <= 0:
                return
            self._preparing += 1
        threading.Thread(
            target=self._prepare_one, args=(shape,), name="scbench-prepare", daemon=True
        ).start()

    def _prepare_one(self, shape: Shape) -> None:
        made: Prepared | None = None
        try:
            made = prepare(self._containers(shape), shape)
        except Exception:  # the run that wants it makes its own, and reports what fails
            made = None
        finally:
            with self._changed:
                if made is not None and not self._closed:
                    self._ready.append(made)
                    made = None
            if made is not None:  # closed meanwhile: removed before close can return
                with contextlib.suppress(Exception):
                    made.discard()
                    self._containers(shape).remove(made.name, volumes=True)
            with self._changed:
                self._preparing -= 1
                self._changed.notify_all()

    def _remove_in_turn(self) -> None:
        while (removal := self._removals.get()) is not None:
            containers, name = removal
            # What cannot be removed now is left to `scbench-ci cleanup`, by its labels.
            with contextlib.suppress(Exception):
                containers.remove(name, volumes=True)
