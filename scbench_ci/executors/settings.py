"""An executor's settings, each field declared as an option (`Setting`): its CLI flag, its action
input and its API keyword come from the field, so a backend's settings are one frozen dataclass in
its own module, registered with it in `choice.py`. Loaded when the CLI's flags are made: nothing
here, nor in a settings type, may load what runs the tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from scbench_ci.foundation.option_values import Option


@dataclass(frozen=True)
class Setting(Option):
    """How a field of an executor's settings is given: an option whose name is the field's."""

    fingerprinted: bool = True
    """Whether it can change a run's result, so that an earlier result made without it is not
    reused (`--skip-existing`)."""


def setting(name: str, default: Any, group: str, **how: Any) -> Any:
    """A field of a settings type, declared as the option `name` under the help's `group`."""
    return field(default=default, metadata={"setting": Setting(name, default, group=group, **how)})


def declarations(settings_type: type) -> Iterator[tuple[str, Setting]]:
    """Each field's name and how it is given, in order."""
    for one in dataclasses.fields(settings_type):
        yield one.name, one.metadata["setting"]


def fingerprinted_fields(settings: object) -> dict[str, object]:
    """The fields of `settings` that can change a run's result."""
    return {
        name: getattr(settings, name)
        for name, declared in declarations(type(settings))
        if declared.fingerprinted
    }
