"""GitHub's workflow commands and environment files, written as the runner reads them: the one
escaper of that kind of output. A command's message and properties are escaped whatever they
are (characters that are not printable shown as Python escapes, then the runner's percent
escapes), so a message cannot end its line, start another command or color the log; an output's
value goes under a delimiter it cannot guess."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from scbench_ci.trust.terminal import terminal_text


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str = "", **properties: str | int | None) -> str:
    given = ",".join(
        f"{key}={escape_property(terminal_text(str(value), kept=''))}"
        for key, value in properties.items()
        if value is not None
    )
    shown = escape_data(terminal_text(message, kept="\n"))
    return f"::{name}{' ' + given if given else ''}::{shown}"


@contextmanager
def group(title: str, stream: TextIO = sys.stdout) -> Iterator[None]:
    stream.write(workflow_command("group", title) + "\n")
    stream.flush()
    try:
        yield
    finally:
        stream.write(workflow_command("endgroup") + "\n")
        stream.flush()


@contextmanager
def commands_stopped(stream: TextIO = sys.stdout) -> Iterator[None]:
    """Nothing printed inside is read as a workflow command: the token cannot be guessed."""
    token = secrets.token_hex(16)
    stream.write(f"::stop-commands::{token}\n")
    stream.flush()
    try:
        yield
    finally:
        # A submission may leave its output mid-line; the resume command must start a line.
        stream.write(f"\n::{token}::\n")
        stream.flush()


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append to GITHUB_OUTPUT in the multi-line form, each value under a random delimiter."""
    with path.open("a", encoding="utf-8") as file:
        for name, value in outputs.items():
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            file.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def append_summary(path: Path, markdown: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(markdown if markdown.endswith("\n") else markdown + "\n")
