"""The quality measure in the run's container, against the real daemon and scb-check: measured
after the tests, as staged, as the tests user, with its own time limit; every failure a reason,
the tests' outcome untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path

from scbench_ci.executors.base import ExecutionRequest, ExecutionResult
from scbench_ci.executors.docker.cache import QUALITY
from scbench_ci.executors.docker.cache_build import cached_venv
from scbench_ci.executors.docker.container_layout import QUALITY_SOURCE
from scbench_ci.executors.docker.executor import DockerExecutor
from scbench_ci.executors.docker.settings import DockerSettings
from scbench_ci.executors.quality_command import SCB_CHECK_SUFFIXES
from scbench_ci.foundation.layout import QUALITY_LOG
from scbench_ci.results.quality import QualityMeasures, Unmeasured
from scbench_ci.results.quality_report import read_quality
from testing.hostile_submissions import MILLION_LINES, PARSER_CRASH
from testing.probes import PROBE_KEY, PROBE_OUTPUT, probe_command

SOURCE = """
def classify(n):
    if n < 0:
        return "negative"
    if n == 0:
        return "zero"
    return "positive"


def main():
    for n in (-1, 0, 1):
        print(classify(n))
"""
# The tests' process overwrites the submission's file in the workspace and tries the measure's
# copy: the measure reads the files as staged.
TAMPER = f"""
import pathlib
pathlib.Path("main.py").write_text("def f():\\n    pass\\n" * 50)
try:
    pathlib.Path("{QUALITY_SOURCE}/main.py").write_text("x = 1\\n")
except OSError as error:
    print("the measure's copy is not writable:", type(error).__name__)
"""


def measure(
    tmp_path: Path,
    image: str,
    files: dict[str, str],
    *,
    code: str = "pass",
    use_cache: bool = True,
    quality_timeout_s: float = 120,
    session_timeout_s: float = 900,
) -> ExecutionResult:
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    logs = tmp_path / "logs"
    logs.mkdir()
    executor = DockerExecutor(DockerSettings(image=image, use_cache=use_cache))
    return executor.execute(
        ExecutionRequest(
            workspace=workspace,
            log_dir=logs,
            setup_commands=(),
            command=probe_command(workspace, code),
            session_timeout_s=session_timeout_s,
            echo=None,
            seal_key=PROBE_KEY,
            quality=True,
            quality_timeout_s=quality_timeout_s,
        )
    )


def measures(result: ExecutionResult) -> QualityMeasures:
    outcome = read_quality(result.quality)
    assert outcome is not None and outcome.measures is not None, outcome
    return outcome.measures


def reason(result: ExecutionResult) -> str:
    outcome = read_quality(result.quality)
    assert outcome is not None and outcome.measures is None, outcome
    return str(outcome.reason)


def test_the_submission_is_measured_as_staged_after_the_tests(
    tmp_path: Path, test_image: str
) -> None:
    result = measure(tmp_path, test_image, {"main.py": SOURCE}, code=TAMPER)

    assert result.exit_code == 0
    found = measures(result)
    # main.py as staged (12 lines, 2 functions), not as the tests left it; not the problem's
    # test file either.
    assert (found.files_scanned, found.total_loc, found.total_functions) == (1, 9, 2)
    assert found.tool_version == "0.2.0"
    assert 0 <= found.verbosity <= 1 and found.erosion == 0
    assert "quality" in result.phases
    assert (
        f"$ scb-check check {QUALITY_SOURCE} --report --include-all  ({cached_venv(QUALITY)}, "
        "its rules read with libyaml; at most 60 s of CPU time a process)"
    ) in (tmp_path / "logs" / QUALITY_LOG).read_text()


# Run in the cached environment as the tests user: scb-check's rules (the file it writes and
# reads, and each bundled one) read by PyYAML's libyaml loader, as the measure's launcher reads
# them, and by its pure-Python loader, as scb-check's own script would.
READ_BOTH_WAYS = """
import json, yaml
from scb_check.resources import rule_texts, rules_file
from scb_check.tree_walking.dispatch import SUPPORTED_SOURCE_SUFFIXES
with rules_file() as path:
    texts = [path.read_text(encoding="utf-8")]
texts += [text for _, text in rule_texts()]
libyaml = [list(yaml.load_all(text, Loader=yaml.CSafeLoader)) for text in texts]
python = [list(yaml.load_all(text, Loader=yaml.SafeLoader)) for text in texts]
print(json.dumps({
    "with_libyaml": yaml.__with_libyaml__,
    "texts": len(texts),
    "documents": sum(map(len, python)),
    "equal": libyaml == python,
    "suffixes": sorted(SUPPORTED_SOURCE_SUFFIXES),
}))
"""
RULES_BOTH_WAYS = f"""
import subprocess
ran = subprocess.run(
    [{cached_venv(QUALITY) + "/bin/python"!r}, "-c", {READ_BOTH_WAYS!r}],
    capture_output=True,
    text=True,
)
open(PROBE_OUTPUT, "w").write(ran.stdout or ran.stderr)
"""


def test_the_launcher_reads_scb_check_s_rules_as_scb_check_does_and_its_suffixes_are_ours(
    tmp_path: Path, test_image: str
) -> None:
    result = measure(tmp_path, test_image, {"main.py": SOURCE}, code=RULES_BOTH_WAYS)

    said = (tmp_path / "workspace" / PROBE_OUTPUT).read_text()
    found = json.loads(said)
    assert found["with_libyaml"] is True, said
    assert found["texts"] > 2 and found["documents"] > 100, said
    assert found["equal"] is True
    assert found["suffixes"] == sorted(SCB_CHECK_SUFFIXES)
    assert measures(result).total_functions == 2


def test_the_submission_decides_nothing_of_what_is_measured_and_what_is_left_out_is_named(
    tmp_path: Path, test_image: str
) -> None:
    """SCBench 1.0's `--include-all`: neither a `.gitignore` nor an ignore comment scb-check
    rejects changes the figures; the staged source files scb-check still skips (a folder named
    like build output, a file its parser cannot read) are named."""
    result = measure(
        tmp_path,
        test_image,
        {
            ".gitignore": "main.py\n*.py\n",
            "main.py": SOURCE + "x = 1  # scbc: ignore[no-such-rule]\n",
            "build/generated.py": SOURCE,
            "node_modules/lib/index.js": "function f() { return 1; }\n",
            "broken.py": "def broken(:\n    pass\n",
            "notes.txt": "not a source file\n",
            # Measured, and known as measured, whatever the bytes of its name.
            os.fsdecode(b"pkg/caf\xe9 \n.py"): SOURCE,
        },
    )

    outcome = read_quality(result.quality)
    assert outcome is not None and outcome.measures is not None, outcome
    assert (outcome.measures.files_scanned, outcome.measures.total_functions) == (2, 4)
    assert outcome.unmeasured == Unmeasured(
        3, ("broken.py", "build/generated.py", "node_modules/lib/index.js")
    )


def test_without_caches_the_run_installs_the_measure_itself(
    tmp_path: Path, test_image: str
) -> None:
    result = measure(tmp_path, test_image, {"main.py": SOURCE}, use_cache=False)

    assert result.exit_code == 0
    assert measures(result).total_functions == 2


def test_no_source_file_is_a_reason(tmp_path: Path, test_image: str) -> None:
    result = measure(tmp_path, test_image, {"notes.txt": "nothing to measure\n"})

    assert result.exit_code == 0
    assert "no supported source files found" in reason(result)


def test_a_file_that_crashes_the_parser_is_a_reason(tmp_path: Path, test_image: str) -> None:
    result = measure(tmp_path, test_image, {"main.py": SOURCE, "deep.py": PARSER_CRASH})

    assert result.exit_code == 0
    assert "scb-check failed with exit code 1" in reason(result)
    assert "too many nested parentheses" in reason(result)


def test_a_million_lines_meet_the_measures_time_limit(tmp_path: Path, test_image: str) -> None:
    result = measure(tmp_path, test_image, {"big.py": MILLION_LINES}, quality_timeout_s=5)

    assert result.exit_code == 0
    assert reason(result) == "scb-check did not finish within its time limit (5 s)"
    assert result.phases["quality"] < 60


def test_a_run_stopped_at_the_session_timeout_is_not_measured(
    tmp_path: Path, test_image: str
) -> None:
    result = measure(
        tmp_path,
        test_image,
        {"main.py": SOURCE},
        code="import time\ntime.sleep(600)",
        session_timeout_s=20,
    )

    assert result.timed_out_in is not None and result.exit_code is None
    assert "session timeout" in reason(result)


def test_quality_off_measures_nothing(tmp_path: Path, test_image: str) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".scbench").mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    request = ExecutionRequest(
        workspace=workspace,
        log_dir=tmp_path / "logs",
        setup_commands=(),
        command=probe_command(workspace, "pass"),
        session_timeout_s=900,
        echo=None,
        seal_key=PROBE_KEY,
    )
    result = DockerExecutor(DockerSettings(image=test_image)).execute(request)

    assert result.quality is None
    assert "quality" not in result.phases
