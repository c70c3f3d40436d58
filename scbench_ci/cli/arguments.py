"""What the CLI's commands share: flags made from the options' declarations (`options/declared.py`),
argument types made of the option parsers, and the terminal's side of the cores' channels."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from scbench_ci.foundation.option_values import BadValue, Option
from scbench_ci.options import fields_of
from scbench_ci.trust.terminal import inert

# What a run uses (the baseline's reader, the channels' streams) is imported where the run uses
# it: parsing the arguments (and `--help`) loads the declarations and the parser only.
if TYPE_CHECKING:
    from scbench_ci.commands.channels import BaselineSource, Echo

Value = TypeVar("Value")
Container = argparse.ArgumentParser | argparse._ArgumentGroup
"""Where a flag is added: a parser, or a group of its flags."""


def argument_type(flag: str, parse: Callable[[str, str], Value]) -> Callable[[str], Value]:
    """An argparse type of an option parser: argparse shows the reason after its own
    `argument <flag>:`."""

    def convert(text: str) -> Value:
        try:
            return parse(flag, text)
        except BadValue as error:
            raise argparse.ArgumentTypeError(error.reason) from None

    return convert


def add_option(parser: Container, option: Option) -> None:
    """The option's flag, as its declaration says: a value parsed by its parser (argparse names
    the flag before the parser's reason), or a switch."""
    assert option.flag is not None, option.name
    flags = [flag for flag in (option.short, option.flag) if flag]
    how: dict[str, Any] = {"dest": option.name, "help": option.help}
    if option.is_switch and option.default is None:
        pair = parser.add_mutually_exclusive_group()
        pair.add_argument(*flags, action="store_true", default=None, **how)
        off = f"--no-{option.flag.removeprefix('--')}"
        pair.add_argument(off, dest=option.name, action="store_false", help=option.off_help)
        return
    if option.is_switch:
        how["action"] = "store_false" if option.default else "store_true"
    else:
        how |= {"type": argument_type(option.flag, option.parse), "metavar": option.metavar}
        if option.choices:
            how["choices"] = option.choices
        if option.repeated:
            how["action"] = "append"
        if option.required:
            how["required"] = True
        else:
            how["default"] = [] if option.repeated else option.default
    parser.add_argument(*flags, **how)


def add_options(parser: argparse.ArgumentParser, options: Iterable[Option]) -> None:
    """The options' flags, in order, each under its declaration's heading."""
    groups: dict[str, Container] = {"": parser}
    for option in options:
        if option.group not in groups:
            groups[option.group] = parser.add_argument_group(option.group)
        add_option(groups[option.group], option)


def given(
    args: argparse.Namespace, options_type: type, options: Iterable[Option]
) -> dict[str, Any]:
    """The fields of `options_type` that the options' flags give (`options.fields_of`); a
    repeated flag's values as one tuple."""

    def value(option: Option) -> Any:
        parsed = getattr(args, option.name)
        if not option.repeated:
            return parsed
        return tuple(item for one in parsed for item in (one if isinstance(one, tuple) else (one,)))

    return fields_of(options_type, options, value)


def take_pytest_arguments(parser: argparse.ArgumentParser) -> None:
    """Says that what follows `--` goes to pytest (`cli/main.py` splits it off before parsing);
    added last, so the usage line holds every flag before it."""
    usage = parser.format_usage().removeprefix("usage: ").rstrip()
    parser.usage = f"{usage} [-- PYTEST ARGS]"
    parser.epilog = (
        "Whatever follows `--` is given to pytest as it is, after the run's own arguments "
        "(-- -k 'parse and not slow' -x)."
    )


def baseline_file(path: str | None) -> BaselineSource:
    """The `--baseline` file or folder, read when the core asks for it."""
    from scbench_ci.results.baseline import load_baseline

    return lambda: load_baseline(Path(path)) if path is not None else None


class LineTrackingStdout:
    """`sys.stdout` (whichever it is when written), knowing whether its last write left a line
    open (a test's output cut by Ctrl-C, a live status line), so that what comes after starts
    on a line of its own."""

    line_open = False

    def write(self, text: str) -> int:
        if text:
            self.line_open = not text.endswith("\n")
        return sys.stdout.write(text)

    def end_line(self) -> None:
        if self.line_open:
            self.write("\n")
            sys.stdout.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)


STDOUT = LineTrackingStdout()
"""The runs' output as the CLI writes it; `end_line` before a message that ends the run."""


def terminal(quiet: bool, verbose: bool = False) -> Echo:
    """The tests' output streamed to stdout, unless quiet; `verbose`: with every line of the
    set-up (`--verbose`)."""
    from scbench_ci.commands.channels import EveryLine
    from scbench_ci.outputs.github.workflow import commands_stopped

    @contextlib.contextmanager
    def opened() -> Iterator[TextIO | None]:
        if quiet:
            yield None
            return
        stream = cast(TextIO, STDOUT)
        # In a workflow step, nothing the submission prints may be read as a workflow command.
        in_workflow = os.environ.get("GITHUB_ACTIONS") == "true"
        with commands_stopped(stream) if in_workflow else contextlib.nullcontext():
            yield cast(TextIO, EveryLine(stream)) if verbose else stream

    return opened


def wants_colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set (no-color.org) or the terminal is dumb."""
    dumb = os.environ.get("TERM") == "dumb"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR") and not dumb


def warn(notice: str) -> None:
    """A notice may name what a submission or a problem holds."""
    print(inert(f"scbench-ci: {notice}", one_line=True), file=sys.stderr)
