"""Command-line entry point: parse arguments and dispatch to a subcommand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scbench_ci.cli import check, cleanup, evaluate, history, merge, plan, summary
from scbench_ci.cli.arguments import STDOUT
from scbench_ci.cli.forgiving import ForgivingParser
from scbench_ci.foundation.version import __version__
from scbench_ci.trust.terminal import inert

if TYPE_CHECKING:
    from scbench_ci.commands.error_handler import Ending

# Each subcommand's module declares its arguments and imports its command's core in `run`: parsing
# (and `--version`) costs the declarations only, and a run loads its own command, not the others'.
COMMANDS = {
    "evaluate": evaluate,
    "plan": plan,
    "merge": merge,
    "check": check,
    "summary": summary,
    "history": history,
    "cleanup": cleanup,
}


_COMPARE = (
    "a run is compared with an earlier one by `scbench-ci evaluate --baseline PATH` (or `merge "
    "--baseline PATH`), PATH an earlier results.json or the folder holding it"
)
INSTEAD = {
    "compare": _COMPARE,
    "diff": _COMPARE,
    "baseline": _COMPARE,
    "run": "`scbench-ci evaluate` runs a problem's tests against a submission",
    "test": "`scbench-ci evaluate` runs a problem's tests against a submission",
    "report": "`scbench-ci summary RESULTS_JSON` renders a run's summary again",
    "trends": "`scbench-ci history RESULTS_JSON` prints the trends a run's history holds",
    "validate": "`scbench-ci check PROBLEM` checks a problem and its reference solutions",
    "lint": "`scbench-ci check PROBLEM` checks a problem and its reference solutions",
}
"""Commands a person may try, from other tools or from this one's stages, and what does their
job: `scbench-ci compare` says where the comparison is."""


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    arguments = list(argv)
    # Everything after the first `--` goes to pytest untouched.
    passthrough: list[str] = []
    if "--" in arguments:
        split = arguments.index("--")
        arguments, passthrough = arguments[:split], arguments[split + 1 :]

    parser = ForgivingParser(
        prog="scbench-ci",
        description="Evaluate a code submission against a checkpoint of an SCBench problem.",
        instead=INSTEAD,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        summary = (module.__doc__ or "").split(":", 1)[-1].strip()
        sub = subcommands.add_parser(name, help=summary, description=summary)
        module.add_arguments(sub)
    command = next((index for index, word in enumerate(arguments) if word in COMMANDS), None)
    if command is not None:
        chosen = subcommands.choices[arguments[command]]
        assert isinstance(chosen, ForgivingParser)
        chosen.refuse_unknown_flags(arguments[command + 1 :])
    args = parser.parse_args(arguments)
    args.pytest_args = passthrough
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    # The catch-all lives with the cores: loaded once parsing is over (`--help` never gets here).
    from scbench_ci.commands.error_handler import handle_errors

    # A crash's log goes where the run's output goes.
    crash_folder = args.output if args.command in ("evaluate", "check") else None
    return handle_errors(lambda: COMMANDS[args.command].run(args), _report, crash_folder)


def _report(ending: Ending) -> None:
    STDOUT.end_line()
    if ending.cancelled:
        print(f"scbench-ci: {ending.message}", file=sys.stderr)
        return
    # Its message may name what a submission or a problem holds: each line one, and inert.
    first, *rest = ending.shown_lines()
    for line in (f"scbench-ci: error: {first}", *rest):
        print(inert(line, one_line=True), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
