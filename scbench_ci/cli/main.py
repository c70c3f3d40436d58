"""Command-line entry point: parse arguments and dispatch to a subcommand."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from scbench_ci import __version__
from scbench_ci.commands import check, cleanup, evaluate, merge, plan, summary
from scbench_ci.crash import crash_message, write_crash_log
from scbench_ci.errors import ExitCode, ScbenchError
from scbench_ci.signals import Terminated, raise_on_sigterm
from scbench_ci.trust.terminal import terminal_text

COMMANDS = {
    "evaluate": evaluate,
    "plan": plan,
    "merge": merge,
    "check": check,
    "summary": summary,
    "cleanup": cleanup,
}


def parse_arguments(argv: Sequence[str]) -> argparse.Namespace:
    arguments = list(argv)
    # Everything after the first `--` goes to pytest untouched.
    passthrough: list[str] = []
    if "--" in arguments:
        split = arguments.index("--")
        arguments, passthrough = arguments[:split], arguments[split + 1 :]

    parser = argparse.ArgumentParser(
        prog="scbench-ci",
        description="Evaluate a code submission against a checkpoint of an SCBench problem.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        summary = (module.__doc__ or "").split(":", 1)[-1].strip()
        sub = subcommands.add_parser(name, help=summary, description=summary)
        module.add_arguments(sub)
    args = parser.parse_args(arguments)
    args.pytest_args = passthrough
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    raise_on_sigterm()
    try:
        return int(COMMANDS[args.command].run(args))
    except ScbenchError as error:
        # Its message may name what a submission or a problem holds.
        print(f"scbench-ci: error: {terminal_text(str(error))}", file=sys.stderr)
        return int(error.exit_code)
    except KeyboardInterrupt:
        print("scbench-ci: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("scbench-ci: terminated", file=sys.stderr)
        return 143
    except Exception as error:  # the catch-all: a crash is never read as a failing verdict
        log = write_crash_log(error, args.output if args.command in ("evaluate", "check") else None)
        print(f"scbench-ci: error: {crash_message(error, log)}", file=sys.stderr)
        return int(ExitCode.INFRASTRUCTURE)


if __name__ == "__main__":
    sys.exit(main())
