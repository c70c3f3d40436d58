"""The one catch-all: how a command that does not return ends, for both front ends."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.commands.error_handler import CRASH_LOG, Ending, handle_errors
from scbench_ci.foundation.errors import InfrastructureError, UsageError, UsageErrors
from scbench_ci.foundation.signals import Terminated


def _ended(error: BaseException, folder: Path | None = None, **how: int) -> tuple[int, Ending]:
    endings: list[Ending] = []

    def command() -> int:
        raise error

    code = handle_errors(command, endings.append, folder, **how)
    (ending,) = endings
    return code, ending


def test_a_command_that_returns_ends_with_its_code() -> None:
    def never(ending: Ending) -> None:
        raise AssertionError(ending)

    assert handle_errors(lambda: 1, never, None) == 1


def test_an_error_the_user_can_act_on_is_its_exit_code_and_its_line() -> None:
    assert _ended(UsageError("--x: bad")) == (2, Ending(2, "--x: bad", lines=("--x: bad",)))
    assert _ended(InfrastructureError("no daemon")) == (
        3,
        Ending(3, "no daemon", lines=("no daemon",)),
    )


def test_several_errors_are_a_line_each() -> None:
    error = UsageErrors("2 problems with the run:", ["  - a\nb", "  - c"])
    assert _ended(error)[1].shown_lines() == ("2 problems with the run:", "  - a\nb", "  - c")
    assert str(error) == "2 problems with the run:\n  - a\nb\n  - c"


def test_ctrl_c_and_sigterm_are_cancels() -> None:
    assert _ended(KeyboardInterrupt()) == (130, Ending(130, "interrupted", cancelled=True))
    assert _ended(KeyboardInterrupt(), interrupted=143)[0] == 143
    assert _ended(Terminated()) == (143, Ending(143, "terminated", cancelled=True))


def test_a_crash_is_exit_3_with_a_log_where_the_output_goes(tmp_path: Path) -> None:
    code, ending = _ended(RuntimeError("a bug"), tmp_path / "out")
    log = tmp_path / "out" / CRASH_LOG
    assert (code, ending.exit_code, ending.cancelled) == (3, 3, False)
    assert ending.message == (
        "internal error (RuntimeError: a bug); this is a bug in scbench-ci, not a verdict. The "
        f"traceback and versions are in {log}"
    )
    assert "RuntimeError: a bug" in log.read_text()


def test_a_crash_s_line_is_short_whatever_its_exception_says(tmp_path: Path) -> None:
    said = "history: " + "P" * 250_000 + "\nis not valid"
    _, ending = _ended(ValueError(said), tmp_path / "out")
    assert ending.message.startswith(f"internal error (ValueError: history: {'P' * 291} ...); ")
    # Short but for the crash log's path, whose length is the temporary folder's.
    assert len(ending.message.replace(str(tmp_path), "")) < 500
    assert said in (tmp_path / "out" / CRASH_LOG).read_text()
