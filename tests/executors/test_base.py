"""How the quality measure ended, in words, the same for every executor."""

from __future__ import annotations

import subprocess

import pytest

from scbench_ci.executors.base import (
    MAX_QUALITY_OUTPUT_BYTES,
    QUALITY_CPU_S,
    cpu_limited,
    reported,
)


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "expected"),
    [
        (0, b'{"erosion": 0}', b"", (b'{"erosion": 0}', None)),
        (1, b'{"erosion": 0.5}', b"warning", (b'{"erosion": 0.5}', None)),
        (
            2,
            b"",
            b"\x1b[2mwarning\x1b[0m\nno supported source files found at /x\n",
            (None, "scb-check failed with exit code 2: no supported source files found at /x"),
        ),
        (1, b"", b"TokenError: ('too many nested parentheses', (1, 205))", (None, None)),
        (
            137,
            b"",
            b"",
            (
                None,
                f"scb-check was killed (exit code 137): its CPU time limit ({QUALITY_CPU_S} s), "
                "or the memory limit",
            ),
        ),
        (
            0,
            b"x" * (MAX_QUALITY_OUTPUT_BYTES + 1),
            b"",
            (None, f"scb-check's output is larger than {MAX_QUALITY_OUTPUT_BYTES} bytes"),
        ),
    ],
)
def test_how_the_measure_ended(
    code: int, stdout: bytes, stderr: bytes, expected: tuple[bytes | None, str | None]
) -> None:
    report, reason = reported(code, stdout, stderr)
    if expected == (None, None):  # a crash: the traceback's last line
        assert report is None and reason == (
            "scb-check failed with exit code 1: TokenError: ('too many nested parentheses', "
            "(1, 205))"
        )
    else:
        assert (report, reason) == expected


def test_the_cpu_limit_kills_a_process_that_spins() -> None:
    """What a submission whose file makes scb-check spin gets (valid Python of 40,000 `if`
    blocks spends more than a minute of scb-check 0.2.0's CPU time, in clones.py): the measure
    killed, and a missing measure fails a quality limit (tests/threats/test_hostile_quality.py,
    a parser crash). Shown here with one second of CPU time, not the sixty of a real run."""
    spin = cpu_limited(["python3", "-c", "while True: pass"])
    spin[3] = "1"  # one second, not QUALITY_CPU_S

    returned = subprocess.run(spin, timeout=120).returncode
    code = 128 - returned if returned < 0 else returned  # killed by a signal, as a shell says

    assert code in (128 + 24, 128 + 9)  # SIGXCPU or SIGKILL
    report, reason = reported(code, b"", b"")
    assert report is None
    assert str(reason).startswith(f"scb-check was killed (exit code {code}): its CPU time limit")
