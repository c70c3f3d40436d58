"""The machine's load: wall time and CPU idle share of `--jobs 1`, `--jobs 2` and `--jobs auto`.

    python benchmarks/load.py [--sets io,cpu] [--modes 1,2,auto] [--root DIR]
                              [--io-problems 4] [--io-checkpoints 3] [--io-tests 4]
                              [--io-requests 3] [--io-wait 1.5]
                              [--cpu-problems 4] [--cpu-checkpoints 2] [--cpu-tests 3]
                              [--cpu-seconds 4]

Two generated problem sets in SCBench's shape (the tests run the submission through the
`entrypoint_argv` fixture, the default entrypoint `uv run main.py`), every reference solution
passing, with no third-party package:

- io: each test starts the submission as an HTTP server on a free loopback port, polls until it
  accepts connections, makes `--io-requests` requests that the server answers after sleeping
  `--io-wait` s, checks the answers and stops it: a checkpoint is mostly idle waiting (about 20 s
  with the defaults, one evaluation at a time);
- cpu: each test runs the submission on a number that makes it count in a pure Python loop for
  about `--cpu-seconds` s on one core (calibrated on this machine when the set is written), with
  the per-test timeout (config.yaml `timeout`) at 3x that, so the tests are CPU-bound and not far
  from their timeouts.

For each set, after one untimed warm-up evaluation of the whole set (uv's cache and the cached
environments filled), and for each mode, one `scbench-ci evaluate --checkpoint all --jobs MODE`
process over the set: its wall time, the CPU's idle share over it (idle + iowait over all of the
aggregate `cpu` line of /proc/stat, read at its start and end), the evaluations it ran side by
side (results.json `jobs`) and each checkpoint's status. One table, side by side, then one line per
set saying whether every checkpoint has the same status in every mode. Exit 1 when a status
differs between modes or a reference solution fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problem_set import _write, write_problem

SCBENCH_CI = Path(sys.executable).parent / "scbench-ci"
WARM_UP_JOBS = "2"
OUTPUT_TAIL = 3000
"""How much of a failed evaluation's output is shown."""

IO_TESTS = """
import socket
import subprocess
import time
import urllib.request

import pytest

STARTUP_S = 15.0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(entrypoint_argv):
    port = free_port()
    process = subprocess.Popen(
        [*entrypoint_argv, "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if process.poll() is not None:
                pytest.fail("server exited with status %d" % process.returncode)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("server did not accept connections on port %d" % port)
                time.sleep(0.05)
        yield "http://127.0.0.1:%d" % port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.parametrize("number", range({tests}))
def test_square_after_a_wait(server, number):
    for request in range({requests}):
        value = number * {requests} + request
        url = server + "/square/%d?wait={wait}" % value
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.read().decode() == "{checkpoint}: " + str(value * value)
"""

IO_SOLUTION = """
import argparse
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlsplit(self.path)
        number = int(url.path.rsplit("/", 1)[1])
        time.sleep(float(parse_qs(url.query)["wait"][0]))
        body = ("{checkpoint}: " + str(number * number)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), Handler).serve_forever()
"""

IO_TIMEOUT_S = 60
"""The io set's per-test timeout: far above a test's few seconds of waiting."""

CPU_TESTS = """
import subprocess

import pytest


@pytest.mark.parametrize("number", range({tests}))
def test_count(entrypoint_argv, number):
    n = {iterations} + number
    run = subprocess.run([*entrypoint_argv, str(n)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "{checkpoint}: " + str(n * (n - 1) // 2)
"""

COUNT = """
def count(n):
    total = 0
    for i in range(n):
        total += i
    return total
"""
"""The cpu set's work: the solutions run it, and the generator times it to size the inputs."""

CPU_SOLUTION = (
    COUNT
    + """

import sys

print("{checkpoint}: " + str(count(int(sys.argv[1]))))
"""
)

CPU_TIMEOUT_FACTOR = 3


def generate_io(
    root: Path, problems: int, checkpoints: int, tests: int, requests: int, wait_s: float
) -> Path:
    """The io set under `root/problems` (returned): tests that start a server and wait on it."""
    folder = root / "problems"
    for index in range(1, problems + 1):
        problem = folder / f"io_{index:02}"
        for name in write_problem(problem, checkpoints, IO_TIMEOUT_S):
            _write(problem / f"{name}.md", f"Serve `/square/N?wait=S`: `{name}: N*N` after S s.\n")
            tests_text = IO_TESTS.format(
                tests=tests, requests=requests, wait=wait_s, checkpoint=name
            )
            _write(problem / f"tests/test_{name}.py", tests_text)
            _write(problem / f"solutions/{name}/main.py", IO_SOLUTION.format(checkpoint=name))
    return folder


def generate_cpu(root: Path, problems: int, checkpoints: int, tests: int, seconds: float) -> Path:
    """The cpu set under `root/problems` (returned): tests that count for about `seconds` each."""
    iterations = max(1, round(_count_rate() * seconds))
    timeout_s = math.ceil(CPU_TIMEOUT_FACTOR * seconds)
    folder = root / "problems"
    for index in range(1, problems + 1):
        problem = folder / f"cpu_{index:02}"
        for name in write_problem(problem, checkpoints, timeout_s):
            _write(
                problem / f"{name}.md", f"Print `{name}: ` and the sum of 0..N-1, by counting.\n"
            )
            tests_text = CPU_TESTS.format(tests=tests, iterations=iterations, checkpoint=name)
            _write(problem / f"tests/test_{name}.py", tests_text)
            _write(problem / f"solutions/{name}/main.py", CPU_SOLUTION.format(checkpoint=name))
    return folder


def _count_rate() -> float:
    """Iterations per second of COUNT's loop here, the best of a few tries (the machine is
    shared: a busy moment would size the inputs too small)."""
    namespace: dict[str, Callable[[int], int]] = {}
    exec(COUNT, namespace)
    n = 2_000_000
    best = 0.0
    for _ in range(3):
        started = time.perf_counter()
        namespace["count"](n)
        best = max(best, n / (time.perf_counter() - started))
    return best


@dataclass(frozen=True)
class Run:
    set_name: str
    mode: str
    wall_s: float
    idle_share: float
    jobs: int
    passed: dict[str, bool]
    """Each checkpoint's status, by `problem/checkpoint`."""


def evaluate(set_name: str, problems: Path, mode: str, output: Path) -> Run:
    """One `scbench-ci evaluate` process over every checkpoint of the set."""
    shutil.rmtree(output, ignore_errors=True)
    argv = [str(SCBENCH_CI), "evaluate", "--problem", str(problems), "--checkpoint", "all"]
    argv += ["--submission", f"{problems}/{{problem}}/solutions/{{checkpoint}}"]
    argv += ["--jobs", mode, "--output", str(output), "--quiet"]
    idle_before, total_before = _cpu_times()
    started = time.perf_counter()
    run = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall_s = time.perf_counter() - started
    idle_after, total_after = _cpu_times()
    results_file = output / "results.json"
    # Exit 1 is a checkpoint that failed, which the table shows; anything else ends the benchmark.
    if run.returncode not in (0, 1) or not results_file.is_file():
        sys.exit(
            f"`scbench-ci evaluate --jobs {mode}` on the {set_name} set exited {run.returncode}:\n"
            f"{run.stdout[-OUTPUT_TAIL:]}\n{run.stderr[-OUTPUT_TAIL:]}"
        )
    results = json.loads(results_file.read_text(encoding="utf-8"))
    passed = {
        f"{problem['name']}/{checkpoint['name']}": checkpoint["passed"]
        for problem in results["problems"]
        for checkpoint in problem["checkpoints"]
    }
    idle_share = (idle_after - idle_before) / max(1, total_after - total_before)
    return Run(set_name, mode, wall_s, idle_share, results["jobs"], passed)


def _cpu_times() -> tuple[int, int]:
    """(idle + iowait, all) jiffies of every core, from /proc/stat's aggregate `cpu` line."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(field) for field in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal; guest and guest_nice are within user, nice.
    return fields[3] + fields[4], sum(fields[:8])


def table(runs: list[Run]) -> list[str]:
    """The runs side by side, as a markdown table."""
    lines = [
        "| set | mode | wall s | x vs jobs 1 | CPU idle % | peak jobs | passed / checkpoints |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        one = next((r for r in runs if r.set_name == run.set_name and r.mode == "1"), None)
        speed_up = f"{one.wall_s / run.wall_s:.2f}x" if one else "-"
        passed = f"{sum(run.passed.values())} / {len(run.passed)}"
        lines.append(
            f"| {run.set_name} | {run.mode} | {run.wall_s:.1f} | {speed_up} | "
            f"{100 * run.idle_share:.0f} | {run.jobs} | {passed} |"
        )
    return lines


def verdicts(set_name: str, runs: list[Run]) -> tuple[bool, list[str]]:
    """Whether every checkpoint of the set has the same status in every mode and every reference
    solution passed, and the lines that say so."""
    names = sorted({name for run in runs for name in run.passed})
    differ = [name for name in names if len({run.passed.get(name) for run in runs}) > 1]
    failing = [name for name in names if not all(run.passed.get(name) for run in runs)]
    modes = ", ".join(run.mode for run in runs)
    if differ:
        lines = [f"{set_name}: statuses differ between modes:"]
        lines += [f"  {name}: {_statuses(name, runs)}" for name in differ]
    else:
        lines = [f"{set_name}: every checkpoint has the same status in every mode ({modes})"]
    if failing:
        lines.append(f"{set_name}: reference solutions failing: {', '.join(failing)}")
    return not differ and not failing, lines


def _statuses(name: str, runs: list[Run]) -> str:
    words = {True: "passed", False: "failed", None: "not run"}
    return ", ".join(f"--jobs {run.mode} {words[run.passed.get(name)]}" for run in runs)


def _generate(set_name: str, folder: Path, args: argparse.Namespace) -> Path:
    if set_name == "io":
        return generate_io(
            folder,
            args.io_problems,
            args.io_checkpoints,
            args.io_tests,
            args.io_requests,
            args.io_wait,
        )
    return generate_cpu(
        folder, args.cpu_problems, args.cpu_checkpoints, args.cpu_tests, args.cpu_seconds
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="io,cpu", help="comma-separated: io, cpu")
    parser.add_argument("--modes", default="1,2,auto", help="comma-separated --jobs values")
    parser.add_argument("--root", type=Path, help="where the sets are written (kept)")
    parser.add_argument("--io-problems", type=int, default=4)
    parser.add_argument("--io-checkpoints", type=int, default=3)
    parser.add_argument("--io-tests", type=int, default=4)
    parser.add_argument("--io-requests", type=int, default=3, help="requests per test")
    parser.add_argument("--io-wait", type=float, default=1.5, help="seconds before each answer")
    parser.add_argument("--cpu-problems", type=int, default=4)
    parser.add_argument("--cpu-checkpoints", type=int, default=2)
    parser.add_argument("--cpu-tests", type=int, default=3)
    parser.add_argument("--cpu-seconds", type=float, default=4.0, help="each test's work alone")
    args = parser.parse_args()
    sets = args.sets.split(",")
    if unknown := [name for name in sets if name not in ("io", "cpu")]:
        parser.error(f"--sets: unknown set {unknown[0]!r} (io, cpu)")
    modes = args.modes.split(",")

    root = args.root or Path(tempfile.mkdtemp(prefix="scbench-load-"))
    try:
        runs: list[Run] = []
        for set_name in sets:
            folder = root / set_name
            problems = _generate(set_name, folder, args)
            print(f"{set_name} set in {problems}; warming up (untimed) ...", flush=True)
            evaluate(set_name, problems, WARM_UP_JOBS, folder / "warm")
            for mode in modes:
                print(f"{set_name}: --jobs {mode} ...", flush=True)
                runs.append(evaluate(set_name, problems, mode, folder / f"jobs-{mode}"))
    finally:
        if args.root is None:
            shutil.rmtree(root, ignore_errors=True)

    print(f"\n{SCBENCH_CI.name} on {os.cpu_count()} cores\n")
    print("\n".join(table(runs)))
    print()
    ok = True
    for set_name in sets:
        set_ok, lines = verdicts(set_name, [run for run in runs if run.set_name == set_name])
        ok = ok and set_ok
        print("\n".join(lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
