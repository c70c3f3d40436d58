"""The markdown job summary: content, escaping of hostile test output, size limits, subcommand."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path, PurePath

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from scbench_ci.executors.base import ExecutionResult, ImageRecord, MissingProgram
from scbench_ci.foundation.layout import SETUP_LOG
from scbench_ci.foundation.scbench_runner import PAPER
from scbench_ci.job.reports import CollectionError, Reports, Status, TestOutcome
from scbench_ci.outputs.failing_view import cause_groups
from scbench_ci.outputs.summary import render_summary
from scbench_ci.outputs.summary_levels import LEVELS
from scbench_ci.problem.load import load_problem
from scbench_ci.problem.model import Problem
from scbench_ci.results.compare import compare
from scbench_ci.results.file import load_results, write_results
from scbench_ci.results.judge import judge_checkpoint
from scbench_ci.results.log_tail import log_tail
from scbench_ci.results.model import CheckpointResult, Failure, FailureKind, RepeatCount, RunResult
from scbench_ci.trust.seal import Broken, Seal
from testing.cli import run_cli
from testing.paths import EXAMPLES
from testing.problems import ProblemFolder
from testing.results import make_outcome, make_run

WORDSTAT = EXAMPLES / "wordstat"
PYTEST_EXIT_1 = ExecutionResult(exit_code=1, setup_exit_code=None, timed_out_in=None, duration_s=2)
HOSTILE = (
    "</details><script>alert(1)</script>",
    "| col |",
    "```",
    "[x](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "two\n\n# lines\n- and a list",
    "- *starts* a _list_",
    "https://evil.example www.evil.example",
)
NO_RATE = "\N{EN DASH}"  # the pass rate of no tests
FOOTER = (
    "\nJudged by the rules of SCBench 1.0 (--scbench 1.0: the runner of "
    "Dongximing/slop-code-bench at 0a2e7bec).\n"
)
GROUP_MARKERS = {"Core": (), "Functionality": ("functionality",), "Error": ("error",)}


# Runs built by the real code path: test outcomes -> judge_checkpoint.


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return load_problem(ProblemFolder(tmp_path_factory.mktemp("summary") / "demo").root)


def checkpoint_result(
    problem: Problem,
    name: str,
    outcomes: list[TestOutcome],
    *,
    log_dir: Path | None = None,
    execution: ExecutionResult = PYTEST_EXIT_1,
    warnings: tuple[str, ...] = (),
) -> CheckpointResult:
    checkpoint = problem.checkpoint(name)
    reports = Reports(tests=tuple(outcomes), exit_code=1, collection_errors=(), problems=())
    return judge_checkpoint(
        problem,
        checkpoint,
        include_prior_tests=True,
        execution=execution,
        seal=Broken.NOT_STARTED if execution.setup_exit_code is not None else Seal(killed=0),
        reports=reports,
        log_dir=log_dir or Path("/nonexistent"),
        policy_name="core-cases",
        session_timeout_s=60,
        warnings=warnings,
        scbench=PAPER,
    )


def document(problem: Problem, *checkpoints: CheckpointResult) -> RunResult:
    return make_run(*checkpoints, problem=problem.name, version=problem.version, duration_s=75.4)


def failing(count: int, message: str, traceback: str | None = None) -> list[TestOutcome]:
    """Failing tests spread over Core, Functionality and Error, each failing its own way: the
    message's first line ends with the test's number."""
    groups = list(GROUP_MARKERS.values())
    first, newline, rest = message.partition("\n")
    return [
        make_outcome(
            f"test_{i}",
            Status.FAILED,
            *groups[i % 3],
            message=f"{first} #{i}{newline}{rest}",
            traceback=traceback,
        )
        for i in range(count)
    ]


# The markdown, checked as GitHub renders it (cmark-gfm is GitHub's renderer).


def outside_fences(markdown: str) -> str:
    """The markdown without the contents of its code fences; fails if a fence is left open."""
    kept, fence = [], ""
    for line in markdown.split("\n"):
        run = re.match(r"`{3,}", line)
        if fence and run and len(run.group()) >= len(fence) and not line[len(fence) :].strip():
            fence = ""
        elif not fence and run:
            fence = run.group()
        elif not fence:
            kept.append(line)
    assert not fence, "a code fence is left open"
    return "\n".join(kept)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


SAFE_TAGS = {
    "h2", "h3", "h4", "p", "strong", "code", "pre", "ul", "li", "blockquote", "a",
    "table", "thead", "tbody", "tr", "th", "td", "details", "summary",
}  # fmt: skip


def rendered_tags(markdown: str) -> list[str]:
    """The HTML tags of the markdown as GitHub renders it, checked to be only ours."""
    # Unsafe: keep raw HTML, to see all that would reach GitHub's sanitizer.
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    parser = Tags()
    parser.feed(html)
    for tag, attributes in parser.tags:
        assert tag in SAFE_TAGS, (tag, attributes)
        assert tag == "a" or not attributes or tag in ("th", "td", "pre"), (tag, attributes)
        assert str(attributes.get("href", "https:")).startswith("https:")
    return [tag for tag, _ in parser.tags]


# Content.


def test_verdict_table_and_failing_tests(problem: Problem) -> None:
    tests = [
        *(make_outcome(f"test_ok_{i}", Status.PASSED) for i in range(6)),
        make_outcome(
            "test_bad", Status.FAILED, message="AssertionError: assert 1 == 2", traceback="tb"
        ),
        make_outcome("test_edge", Status.PASSED, "error"),
        make_outcome("test_fixture", Status.ERROR, "error", message="FileNotFoundError: x.csv"),
        make_outcome("test_later", Status.SKIPPED, "functionality", message="not yet"),
        make_outcome("test_known", Status.XFAILED, "functionality"),
    ]
    markdown = render_summary(document(problem, checkpoint_result(problem, "checkpoint_1", tests)))

    head, _, rest = markdown.partition("### ")
    assert head.startswith("## ❌ FAILED: demo v1, checkpoint\\_1\n")
    assert "Policy **core-cases**: every Core test passes." in head
    assert (
        "Core tests: **6 of 7** pass · all tests: 7 of 11 pass, 2 fail, 2 skipped · 1 min 15 s\n"
    ) in head
    assert "passes. Reports, logs and results.json: the output folder." in head
    assert "Infrastructure failure" not in head
    assert rest.startswith("checkpoint\\_1: ❌ failed in 2.0 s\n")
    for row in (
        "| Core | 6 | 1 | 0 | 7 | 85.7% |",
        "| Functionality | 0 | 0 | 2 | 2 | 0.0% |",
        "| Error | 1 | 1 | 0 | 2 | 50.0% |",
        f"| Regression | 0 | 0 | 0 | 0 | {NO_RATE} |",
        "| **All** | 7 | 2 | 2 | 11 | 63.6% |",
    ):
        assert f"\n{row}\n" in markdown
    assert "#### checkpoint\\_1: 2 failing tests, 2 causes\n" in markdown
    # The cause on the folded line, the traceback under it: the message is not repeated.
    assert (
        "<details><summary><code>tests/test_checkpoint_1.py::test_bad</code> Core, failed: "
        "AssertionError: assert 1 == 2</summary>\n\n```text\ntb\n```\n\n</details>\n"
    ) in markdown
    fixture = "<code>tests/test_checkpoint_1.py::test_fixture</code> Error, error: FileNotFound"
    assert fixture in markdown
    # What failed comes before the counts.
    assert markdown.index("test_bad") < markdown.index("| Core | 6 |")
    assert markdown.count("<details>") == 2  # skipped and xfailed tests are not failures
    assert "| Checkpoint |" not in markdown  # no progression table for one checkpoint


def test_a_passing_run(problem: Problem) -> None:
    result = checkpoint_result(problem, "checkpoint_1", [make_outcome("test_ok", Status.PASSED)])
    markdown = render_summary(document(problem, result))
    assert markdown.startswith("## ✅ PASSED: demo v1, checkpoint\\_1\n")
    assert "Core tests: **1 of 1** pass · all tests: 1 of 1 pass · 1 min 15 s\n" in markdown
    assert "### checkpoint\\_1: ✅ passed in 2.0 s\n" in markdown  # a run of one: its section
    assert "<details>" not in markdown and "shortened" not in markdown


def test_progression_of_several_checkpoints(problem: Problem) -> None:
    first = checkpoint_result(problem, "checkpoint_1", [make_outcome("test_a", Status.PASSED)])
    second = checkpoint_result(
        problem,
        "checkpoint_2",
        [
            make_outcome("test_a", Status.PASSED),
            make_outcome("test_b", Status.FAILED, file="test_checkpoint_2.py"),
            make_outcome("test_c", Status.FAILED, "functionality", file="test_checkpoint_2.py"),
            make_outcome("test_d", Status.PASSED, file="test_checkpoint_2.py"),
        ],
    )
    markdown = render_summary(document(problem, first, second))
    assert markdown.startswith("## ❌ FAILED: demo v1, checkpoint\\_1, checkpoint\\_2\n")
    assert (
        "**1 of 2** checkpoints pass · Core tests: **2 of 3** pass · all tests: 3 of 5 pass, "
        "2 fail · 1 min 15 s\n"
    ) in markdown
    assert (
        "| Checkpoint | Verdict | Core passed | Core | Functionality | Error | Regression | All |\n"
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        f"| checkpoint\\_1 | ✅ passed | 1/1 | 100.0% | {NO_RATE} | {NO_RATE} | {NO_RATE} "
        "| 100.0% |\n"
        f"| checkpoint\\_2 | ❌ failed | 1/2 | 50.0% | 0.0% | {NO_RATE} | 100.0% | 50.0% |\n"
    ) in markdown
    # Only the failed checkpoint has a section; the table names the one that passed.
    assert "### checkpoint\\_1" not in markdown
    assert "### checkpoint\\_2: ❌ failed" in markdown
    assert markdown.endswith(
        "\nWithout a section of their own: 1 checkpoint that passes (details `all` gives every "
        "checkpoint one).\n" + FOOTER
    )
    everything = render_summary(document(problem, first, second), details="all")
    assert everything.index("### checkpoint\\_1") < everything.index("### checkpoint\\_2")
    assert "Without a section" not in everything


def test_a_skipped_core_test_fails_core_cases_and_says_why(problem: Problem) -> None:
    """An xfailed Core test is not passed, as SCBench counts it: `1/2 (1 skipped)` fails
    `core-cases`, and the section says why in SCBench's terms."""
    xfailed = checkpoint_result(
        problem,
        "checkpoint_1",
        [make_outcome("test_a", Status.PASSED), make_outcome("test_b", Status.XFAILED)],
    )
    second = checkpoint_result(
        problem,
        "checkpoint_2",
        [make_outcome("test_c", Status.PASSED, file="test_checkpoint_2.py")],
    )
    markdown = render_summary(document(problem, xfailed, second))
    assert "| checkpoint\\_1 | ❌ failed | 1/2 (1 skipped) | 50.0% |" in markdown
    assert "| checkpoint\\_2 | ✅ passed | 1/1 | 100.0% |" in markdown
    assert (
        "**Why it failed**: 1 Core test skipped or xfailed (SCBench counts a skipped or xfailed "
        "test as not passed)."
    ) in markdown


def test_the_footer_names_each_program_the_image_lacked_once(problem: Problem) -> None:
    """What the images the tests ran in lacked of SCBench's own image is said at the end, each
    program once, hostile text as text; nothing when they lacked nothing."""
    minio = MissingProgram("minio", "a test that starts a MinIO server cannot")
    hostile = MissingProgram(HOSTILE[0], HOSTILE[5])
    lacking = ImageRecord("img", "sha256:1", missing=(minio, hostile))
    first = replace(
        checkpoint_result(problem, "checkpoint_1", [make_outcome("a", Status.PASSED)]),
        image=lacking,
    )
    second = replace(
        checkpoint_result(
            problem, "checkpoint_2", [make_outcome("c", Status.PASSED, file="test_checkpoint_2.py")]
        ),
        image=replace(lacking, missing=(minio,)),
    )
    markdown = render_summary(document(problem, first, second))
    footer = markdown[markdown.index("\n🧰") :]
    assert "lacks 2 programs of SCBench's own evaluation image" in footer
    assert footer.count("`minio`: a test that starts a MinIO server cannot.") == 1
    # Hostile names are inline code (no HTML there), their effects escaped text on one line.
    assert "- `</details><script>alert(1)</script>`: two \\# lines - and a list.\n" in footer
    assert markdown.endswith(footer)
    assert rendered_tags(footer).count("li") == 2
    whole = replace(first, image=replace(lacking, missing=()))
    assert "🧰" not in render_summary(document(problem, whole))


def test_a_collection_failure_says_what_failed_once(problem: Problem) -> None:
    reports = Reports(
        tests=(),
        exit_code=2,
        collection_errors=(CollectionError("tests/test_checkpoint_1.py", "E   SyntaxError"),),
        problems=(),
    )
    checkpoint = judge_checkpoint(
        problem,
        problem.checkpoints[0],
        include_prior_tests=True,
        execution=replace(PYTEST_EXIT_1, exit_code=2),
        seal=Seal(killed=0),
        reports=reports,
        log_dir=Path("/nonexistent"),
        policy_name="core-cases",
        session_timeout_s=60,
        warnings=(),
        scbench=PAPER,
    )
    markdown = render_summary(document(problem, checkpoint))
    assert (
        "\n**Why it failed**: collection: errors collecting tests/test\\_checkpoint\\_1.py.\n\n"
        "**Test collection failed**. pytest could not import"
    ) in markdown
    assert "failed: test collection failed" not in markdown.lower()


def test_a_missing_submission_says_does_not_exist_once(problem: Problem) -> None:
    failure = Failure(FailureKind.MISSING, "the submission folder /s/checkpoint_1 does not exist")
    checkpoint = replace(
        checkpoint_result(problem, "checkpoint_1", []), passed=False, failure=failure
    )
    markdown = render_summary(document(problem, checkpoint))
    assert (
        "**Why it failed**: missing: the submission folder /s/checkpoint\\_1 does not exist.\n\n"
        "**Submission missing**. No test ran. Check the `--submission` template"
    ) in markdown
    assert markdown.count("does not exist") == 1


@pytest.mark.parametrize(
    ("kind", "title"),
    [
        ("setup", "**Setup failed**"),
        ("timeout", "**Timed out**"),
        ("infrastructure", "**Infrastructure failure**"),
        ("collection", "**Test collection failed**"),
        ("no_tests", "**No tests collected**"),
        ("usage", "**Pytest usage error**"),
        ("internal", "**Pytest internal error**"),
        ("interrupted", "**Pytest interrupted**"),
        ("tampered", "**Reports tampered with**"),
        ("aborted", "**Test runner stopped**"),
        ("resources", "**Resource limit reached**"),
        ("reports", "**Reports unusable**"),
        ("missing", "**Submission missing**"),
    ],
)
def test_failure_kinds_are_explained(problem: Problem, kind: str, title: str) -> None:
    failure = Failure(FailureKind(kind), "what happened", "first line\nE   the error")
    checkpoint = replace(
        checkpoint_result(problem, "checkpoint_1", []), passed=False, failure=failure
    )
    result = document(problem, checkpoint)
    markdown = render_summary(result)
    shown_kind = kind.replace("_", "\\_")
    assert f"\n**Why it failed**: {shown_kind}: what happened.\n\n{title}. " in markdown
    assert "\n```text\nfirst line\nE   the error\n```\n" in markdown
    infrastructure_line = "⚠️ **Infrastructure failure**: some tests could not be run"
    assert (infrastructure_line in markdown) is (kind in ("infrastructure", "internal"))


def test_a_setup_failure_shows_the_end_of_its_log(problem: Problem, tmp_path: Path) -> None:
    """As an earlier scbench-ci judged a failing setup command (the tests now run all the same,
    as under SCBench): a baseline's results.json may hold one."""
    (tmp_path / SETUP_LOG).write_text("".join(f"step {i}\n" for i in range(100)))
    failure = Failure(
        FailureKind.SETUP,
        "a setup command failed with exit code 2",
        log_tail(tmp_path / SETUP_LOG),
    )
    result = replace(
        checkpoint_result(problem, "checkpoint_1", [], log_dir=tmp_path),
        failure=failure,
        passed=False,
        duration_s=1.0,
    )
    markdown = render_summary(document(problem, result))
    assert "**Why it failed**: setup: a setup command failed with exit code 2.\n" in markdown
    assert "**Setup failed**. A command that" in markdown
    assert "The end of the setup log:\n\n```text\nstep 60\n" in markdown
    assert "step 99\n```\n" in markdown
    assert "checkpoint\\_1: ❌ setup failed in 1.0 s" in markdown


def test_warnings_are_a_short_list(problem: Problem) -> None:
    warnings = ("- a warning that looks like a list item", *(f"w{i}" for i in range(12)))
    result = checkpoint_result(problem, "checkpoint_1", [], warnings=warnings)
    markdown = render_summary(document(problem, result))
    assert "\n**Warnings**\n\n- \\- a warning that looks like a list item\n- w0\n" in markdown
    assert "\n- w8\n- … and 3 more\n" in markdown


def test_a_failing_test_is_capped_with_the_end_of_its_traceback(problem: Problem) -> None:
    message = "AssertionError: " + "m" * 5000
    details = "".join(f"traceback line {i}\n" for i in range(500)) + "E   the end"
    result = checkpoint_result(problem, "checkpoint_1", failing(1, message, details))
    markdown = render_summary(document(problem, result))
    block = markdown[markdown.index("```text\n") : markdown.index("\n```\n")]
    assert len(block) < 2200
    # The block is the traceback's end alone, whole lines; what is cut is said above it.
    assert block.startswith("```text\ntraceback line ")
    assert "cut" not in block and "m" * 100 not in block
    assert block.endswith("traceback line 499\nE   the end")
    note = markdown[: markdown.index("```text\n")].rsplit("\n\n", 2)[-2]
    assert note.startswith("The end of the traceback (its first ") and "are in the reports" in note


@pytest.mark.parametrize(
    ("url", "name", "folder", "pointer"),
    [
        (None, None, None, "the output folder"),
        (None, None, PurePath(".scbench"), "the `.scbench/` folder"),
        (None, None, PurePath("out/run 1"), "the `out/run 1/` folder"),
        (None, None, PurePath("/abs/a`b"), "the ``/abs/a`b/`` folder"),
        (None, "scbench_results", PurePath("o"), "the workflow artifact **scbench\\_results**"),
        ("https://github.com/o/r/actions/runs/1/artifacts/2", "res", None, "[res](https://github"),
        (
            "https://x.test/a b(c)<d>",
            None,
            None,
            "[the workflow artifact](https://x.test/a%20b%28c%29%3Cd%3E)",
        ),
    ],
)
def test_artifact_pointer(
    problem: Problem, url: str | None, name: str | None, folder: PurePath | None, pointer: str
) -> None:
    result = document(problem, checkpoint_result(problem, "checkpoint_1", []))
    markdown = render_summary(result, artifact_url=url, artifact_name=name, reports_folder=folder)
    assert f"Reports, logs and results.json: {pointer}" in markdown


def test_only_web_links_to_the_artifact(problem: Problem) -> None:
    result = document(problem, checkpoint_result(problem, "checkpoint_1", []))
    with pytest.raises(ValueError, match="not an http"):
        render_summary(result, artifact_url="javascript:alert(1)")


def test_max_bytes_has_a_floor(problem: Problem) -> None:
    result = document(problem, checkpoint_result(problem, "checkpoint_1", []))
    with pytest.raises(ValueError, match="max_bytes must be at least 1024"):
        render_summary(result, max_bytes=1000)


# Against a baseline, and flaky tests.


def compared(run: RunResult, baseline: RunResult) -> RunResult:
    return replace(run, comparison=compare(run, baseline, "baseline/results.json"))


def flaky(name: str, message: str, *, reruns: int = 1) -> TestOutcome:
    return replace(make_outcome(name, Status.FLAKY, message=message), reruns=reruns)


def test_the_changes_list_each_changed_checkpoint_once(problem: Problem) -> None:
    baseline = document(
        problem,
        checkpoint_result(
            problem,
            "checkpoint_1",
            [
                make_outcome("test_a", Status.PASSED),
                make_outcome("test_b", Status.PASSED, "error"),
                make_outcome("test_c", Status.FAILED, "functionality", message="was broken"),
            ],
        ),
    )
    run = document(
        problem,
        checkpoint_result(
            problem,
            "checkpoint_1",
            [
                make_outcome("test_a", Status.FAILED, message="AssertionError: 1 == 2\nmore"),
                make_outcome("test_b", Status.PASSED, "error"),
                make_outcome("test_c", Status.PASSED, "functionality"),
                make_outcome("test_d", Status.PASSED, "error"),
            ],
        ),
    )
    markdown = render_summary(compared(run, baseline))
    # What failed first, then what changed.
    head, details = markdown.split("\n### checkpoint\\_1: ")
    assert head.startswith("## ❌ FAILED: demo v1, checkpoint\\_1\n")
    details, changes = details.split("\n### Changes since the baseline\n\n")
    assert changes == (
        "Compared with the baseline **baseline/results.json** of 2026-01-01 00:00 UTC: "
        "1 regression, 1 fixed, 1 new, 0 removed, 0 flaky, 1 verdict change.\n"
        "\n"
        "Per group, over the checkpoints both runs evaluated: Core -1 passed; "
        "Functionality +1 passed; Error +1 passed, +1 tests.\n"
        "\n"
        "> ⚠️ The two runs did not select the same tests, so a test that only one of them ran is "
        "neither a fix nor a regression:\n"
        "> - 1 test(s) new and 0 removed in checkpoints both runs evaluated: the tests themselves "
        "changed\n"
        "\n"
        "| Checkpoint | Verdict | Newly failing | Fixed | New | Removed |\n"
        "| --- | :---: | ---: | ---: | ---: | ---: |\n"
        "| checkpoint\\_1 | ✅ → ❌ | 1 | 1 | 1 | 0 |\n"
        "\n"
        "<details><summary><strong>Fixed</strong>: 1 test in checkpoint_1</summary>\n"
        "\n"
        "- <code>tests/test\\_checkpoint\\_1.py::test\\_c</code>\n"
        "\n"
        "</details>\n" + FOOTER
    )
    assert "Core tests: **0 of 1** pass (-1) · all tests: 3 of 4 pass (+1), 1 fail" in head
    for row in (
        "| Core | 0 (-1) | 1 | 0 | 1 | 0.0% |",
        "| Functionality | 1 (+1) | 0 | 0 | 1 | 100.0% |",
        "| Error | 2 (+1) | 0 | 0 | 2 (+1) | 100.0% |",
        "| Regression | 0 | 0 | 0 | 0 | \N{EN DASH} |",
        "| **All** | 3 (+1) | 1 | 0 | 4 (+1) | 75.0% |",
    ):
        assert f"\n{row}\n" in details
    # The regression is listed once, in its checkpoint's section, first and marked.
    assert "#### checkpoint\\_1: 1 failing test\n" in details
    assert (
        "<code>tests/test_checkpoint_1.py::test_a</code> Core, failed (newly failing): "
        "AssertionError: 1 == 2</summary>"
    ) in details
    assert markdown.count("test\\_a") + markdown.count("test_a") == 1
    rendered_tags(markdown)


def test_without_changes_a_comparison_is_one_line(problem: Problem) -> None:
    run = document(
        problem,
        checkpoint_result(problem, "checkpoint_1", [make_outcome("test_a", Status.PASSED)]),
    )
    markdown = render_summary(compared(run, run))
    assert markdown.endswith(
        "\n### Changes since the baseline\n\nCompared with the baseline **baseline/results.json**"
        " of 2026-01-01 00:00 UTC: 0 regressions, 0 fixed, 0 new, 0 removed, 0 flaky, "
        "0 verdict changes.\n" + FOOTER
    )
    assert "\n| Core | 1 | 0 | 0 | 1 | 100.0% |\n" in markdown


def test_a_different_selection_is_a_note_not_fixes(problem: Problem) -> None:
    first = checkpoint_result(problem, "checkpoint_1", [make_outcome("test_a", Status.FAILED)])
    second = checkpoint_result(
        problem,
        "checkpoint_2",
        [make_outcome("test_a", Status.PASSED, file="test_checkpoint_2.py")],
    )
    markdown = render_summary(compared(document(problem, second), document(problem, first)))
    assert "0 regressions, 0 fixed, 0 new, 0 removed, 0 flaky, 0 verdict changes." in markdown
    assert (
        "> - not evaluated in this run, only in the baseline: demo / checkpoint\\_1\n"
        "> - not evaluated in the baseline: demo / checkpoint\\_2\n"
    ) in markdown
    assert "#### Fixed" not in markdown
    assert "\n| Core | 1 | 0 | 0 | 1 | 100.0% |\n" in markdown  # no deltas without a baseline


def test_flaky_tests_are_listed_without_a_comparison(problem: Problem) -> None:
    checkpoint = checkpoint_result(
        problem,
        "checkpoint_1",
        [
            make_outcome("test_ok", Status.PASSED),
            flaky("test_rerun", "AssertionError: first try\nsecond line", reruns=2),
            flaky("test_repeat", "passed in 2 of 3 runs; run 2: boom"),
        ],
    )
    tests = list(checkpoint.tests)
    tests[2] = replace(tests[2], repeat=RepeatCount(passed=2, runs=3))
    run = replace(document(problem, replace(checkpoint, tests=tuple(tests))), reruns=2, repeat=3)
    markdown = render_summary(run)
    assert (
        "\n### Flaky tests: 2\n\n"
        "A flaky test passed in some of the 3 runs of its checkpoint (--repeat) and failed in "
        "the others, or failed, then passed when pytest reran it in the same session (--reruns); "
        "these are counted as failed for the policy.\n\n"
        "| Checkpoint | Test | Outcome | First failure |\n"
        "| --- | --- | --- | --- |\n"
        "| checkpoint\\_1 | <code>tests/test\\_checkpoint\\_1.py::test\\_rerun</code> (line 3) "
        "| passed on attempt 3 | AssertionError: first try |\n"
        "| checkpoint\\_1 | <code>tests/test\\_checkpoint\\_1.py::test\\_repeat</code> (line 3) "
        "| passed 2 of 3 runs | passed in 2 of 3 runs; run 2: boom |\n"
    ) in markdown
    assert markdown.index("### checkpoint\\_1: ❌ failed") < markdown.index("### Flaky tests")
    assert (
        "| Group | Passed | Failed | Skipped | Total | Pass rate | Flaky |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        "| Core | 1 | 2 | 0 | 3 | 33.3% | 2 |\n"
    ) in markdown
    assert "### Changes" not in markdown
    assert "<details>" not in markdown  # flaky tests are not listed as failing
    passes = render_summary(replace(run, flaky_passes=True))
    assert "these are counted as passed (--flaky-passes)." in passes


@pytest.mark.parametrize(
    ("reruns", "repeat", "meaning"),
    [
        (
            2,
            1,
            "A flaky test failed, then passed when pytest reran it in the same session "
            "(--reruns); ",
        ),
        (
            0,
            3,
            "A flaky test passed in some of the 3 runs of its checkpoint (--repeat) and "
            "failed in the others; ",
        ),
    ],
)
def test_the_flaky_note_says_how_the_run_found_them(
    problem: Problem, reruns: int, repeat: int, meaning: str
) -> None:
    """`--repeat` runs a checkpoint whole, several times; `--reruns` reruns a failing test in its
    session: the note describes the one the run used."""
    checkpoint = checkpoint_result(problem, "checkpoint_1", [flaky("test_f", "boom", reruns=1)])
    run = replace(document(problem, checkpoint), reruns=reruns, repeat=repeat)
    markdown = render_summary(run)
    assert f"\n### Flaky tests: 1\n\n{meaning}these are counted as failed" in markdown
    assert markdown.count("(--repeat)") == (repeat > 1)
    assert markdown.count("(--reruns)") == (reruns > 0)


def test_results_json_gives_the_same_summary_of_changes(problem: Problem, tmp_path: Path) -> None:
    baseline = document(
        problem, checkpoint_result(problem, "checkpoint_1", [make_outcome("a", Status.PASSED)])
    )
    run = document(
        problem,
        checkpoint_result(
            problem,
            "checkpoint_1",
            [make_outcome("a", Status.FAILED, message="m"), flaky("b", "first", reruns=2)],
        ),
    )
    result = compared(run, baseline)
    markdown = render_summary(result)
    assert "(newly failing)" in markdown and "### Flaky tests: 1" in markdown
    assert render_summary(load_results(write_results(result, tmp_path))) == markdown


HOSTILE_ID = "test[</code><script>x</script>|`|::error::x\r\n::warning::y https://evil.example]"


def test_hostile_text_in_the_changes_renders_as_text(problem: Problem) -> None:
    names = [f"{HOSTILE_ID}{text}" for text in HOSTILE]
    baseline = document(
        problem,
        checkpoint_result(problem, "checkpoint_1", [make_outcome(n, Status.PASSED) for n in names]),
    )
    run = document(
        problem,
        checkpoint_result(
            problem,
            "checkpoint_1",
            [
                *(
                    make_outcome(n, Status.FAILED, message=t)
                    for n, t in zip(names, HOSTILE, strict=True)
                ),
                flaky(HOSTILE_ID, HOSTILE[0]),
            ],
        ),
    )
    result = compared(run, baseline)
    comparison = result.comparison
    assert comparison is not None
    result = replace(result, comparison=replace(comparison, baseline=HOSTILE[3]))
    markdown = render_summary(result)
    text = outside_fences(markdown)
    assert "<script" not in text and "</code><" not in text
    assert "**\\[x\\](javascript:alert(1))** of 2026-01-01" in text
    tags = rendered_tags(markdown)
    # The changed checkpoint: one row; flaky: one row; the group table: five rows of seven.
    assert tags.count("tr") == (1 + 1) + (1 + 1) + (1 + 5)
    assert tags.count("td") == 6 + 4 + 7 * 5
    assert "a" not in tags
    assert tags.count("h4") == 1  # the checkpoint's failing Core tests, the new ones marked
    assert text.count("(newly failing)") == len(HOSTILE)


def test_huge_changes_are_capped(problem: Problem) -> None:
    message = "AssertionError: " + "x" * 200
    names = [f"test_{i}_{'n' * 200}" for i in range(1500)]
    baseline = document(
        problem,
        checkpoint_result(problem, "checkpoint_1", [make_outcome(n, Status.PASSED) for n in names]),
    )
    run = document(
        problem,
        checkpoint_result(
            problem,
            "checkpoint_1",
            [
                *(make_outcome(n, Status.FAILED, message=message) for n in names[:1000]),
                *(flaky(n, message) for n in names[1000:]),
            ],
        ),
    )
    result = compared(run, baseline)
    for max_bytes, listed in ((1_000_000, 100), (12_000, 5)):
        markdown = render_summary(result, max_bytes=max_bytes)
        assert len(markdown.encode()) <= max_bytes
        outside_fences(markdown)
        assert "1000 regressions, 0 fixed, 0 new, 0 removed, 500 flaky" in markdown
        assert "\n| checkpoint\\_1 | ✅ → ❌ | 1000 | 0 | 0 | 0 |\n" in markdown
        assert markdown.count("| passed on attempt 2 | AssertionError: xxx") == listed
        assert f"\n… and {500 - listed} more, not listed here.\n" in markdown
        # A test id in a table cell, where it cannot wrap, is cut to its end.
        flaky_table = markdown.partition("### Flaky tests")[2].partition("\n### ")[0]
        assert flaky_table.count("| <code>…" + "n" * 79 + "</code> (line 3) |") == listed
        assert "n" * 80 not in flaky_table


# Escaping: nothing from the submission or the tests can break the markdown or add HTML.


@pytest.fixture(scope="module")
def hostile_markdown(problem: Problem) -> str:
    tests = [
        make_outcome(f"test[{text}]", Status.FAILED, message=text, traceback=f"{text}\n{text}")
        for text in HOSTILE
    ]
    checkpoint = checkpoint_result(problem, "checkpoint_1", tests, warnings=HOSTILE)
    result = make_run(replace(checkpoint, name=HOSTILE[1]), problem=HOSTILE[0])
    return render_summary(result, artifact_name=HOSTILE[3])


def test_hostile_text_is_escaped_outside_code(hostile_markdown: str) -> None:
    markdown = outside_fences(hostile_markdown)
    for tag in ("<script", "<img", "</details><"):
        assert tag not in markdown
    markdown_lines = [line for line in markdown.split("\n") if not line.startswith("<details>")]
    assert not re.search(r"(?<!\\)\]\(javascript", "\n".join(markdown_lines))
    assert "\n#" not in markdown.replace("\n## ", "").replace("\n### ", "").replace("\n#### ", "")
    assert "&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "## ❌ FAILED: &lt;/details&gt;&lt;script&gt;" in markdown
    assert "### \\| col \\|: ❌ failed" in markdown
    assert "the workflow artifact **\\[x\\](javascript:alert(1))**" in markdown
    assert "- \\- \\*starts\\* a \\_list\\_\n" in markdown
    # In a <summary> no markdown is parsed: HTML escapes only, newlines folded.
    assert "<code>tests/test_checkpoint_1.py::test[two # lines - and a list]</code>" in markdown
    assert "<code>tests/test_checkpoint_1.py::test[&lt;img src=x onerror=alert(1)&gt;]" in markdown


def test_code_fences_are_longer_than_any_backtick_run(hostile_markdown: str) -> None:
    assert "\n````text\n```\n```\n````\n" in hostile_markdown
    outside_fences(hostile_markdown)


def test_hostile_text_renders_as_text(hostile_markdown: str) -> None:
    tags = rendered_tags(hostile_markdown)
    assert tags.count("details") == len(HOSTILE)
    assert tags.count("pre") == len(HOSTILE)
    # The five rows of the group table have six cells each, whatever the checkpoint's name.
    assert tags.count("td") == 6 * 5
    assert tags.count("li") == len(HOSTILE)
    assert tags.count("h2") == 1
    assert "a" not in tags  # no web address became a link


# Size: a summary never goes over max_bytes, and says what it left out.


@pytest.fixture(scope="module")
def huge(problem: Problem, tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """20,000 failing tests with 5 KB messages and tracebacks, and a checkpoint that timed out."""
    message = "AssertionError: " + "five kilobytes of message\n" * 200
    tests = failing(20_000, message, traceback="a traceback line\n" * 300)
    logs = tmp_path_factory.mktemp("logs")
    log = "".join(f"log line {i}\n" for i in range(99)) + "E   ````` the end\n"
    (logs / "pytest.log").write_text(log)
    timed_out = checkpoint_result(
        problem,
        "checkpoint_2",
        [],
        log_dir=logs,
        execution=ExecutionResult(None, setup_exit_code=None, timed_out_in="tests", duration_s=60),
        warnings=tuple(f"warning {i}" for i in range(30)),
    )
    return document(problem, checkpoint_result(problem, "checkpoint_1", tests), timed_out)


@pytest.fixture(scope="module")
def many_tracebacks(problem: Problem) -> RunResult:
    tests = failing(200, "AssertionError: short", traceback="a traceback line\n" * 300)
    return document(problem, checkpoint_result(problem, "checkpoint_1", tests))


@pytest.mark.parametrize(
    ("fixture", "max_bytes", "level"),
    [
        ("many_tracebacks", 1_000_000, 0),
        ("many_tracebacks", 100_000, 1),
        ("huge", 1_000_000, 2),
        ("huge", 8_000, 3),
    ],
)
@pytest.mark.slow
def test_each_level_is_reached_and_fits(
    request: pytest.FixtureRequest, fixture: str, max_bytes: int, level: int
) -> None:
    markdown = render_summary(request.getfixturevalue(fixture), max_bytes=max_bytes)
    assert len(markdown.encode()) <= max_bytes
    outside_fences(markdown)
    for index, other in enumerate(LEVELS[1:], start=1):
        assert (other.left_out in markdown) is (index == level)
    assert ("This summary was shortened to stay under" in markdown) is (level > 0)
    assert ("a traceback line" in markdown) is (level == 0)
    assert markdown.startswith("## ❌ FAILED: demo v1, checkpoint\\_1")
    assert "| Core | 0 | " in markdown
    if level == 2:
        assert markdown.count("<details>") == 10
        assert "\n… and 19990 more causes of failing tests, not listed here.\n" in markdown
    if level == 3:
        assert "<details>" not in markdown
        assert "Failing tests not listed here: 20000 (see the note at the top)." in markdown
        assert (
            "**Why it failed**: timeout: the session timeout of 60 s stopped the tests." in markdown
        )
        assert "\n``````text\nlog line 90\n" in markdown
        assert "\nE   ````` the end\n``````\n" in markdown


def test_the_last_resort_is_a_clean_cut(huge: RunResult) -> None:
    markdown = render_summary(huge, max_bytes=2525)
    assert len(markdown.encode()) <= 2525
    # Cut in the log's code block, which is closed.
    assert re.search(
        r"\nlog line \d+\n``````\n\n✂️ The summary is cut here to stay under 2,525 bytes.\n$",
        markdown,
    )
    assert markdown.startswith("## ❌ FAILED: demo v1, checkpoint\\_1, checkpoint\\_2\n")
    outside_fences(markdown)


# A real failing run, and the subcommand as a user runs it.


def scbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results.json of the broken wordstat submission against every checkpoint."""
    output = tmp_path_factory.mktemp("broken")
    run = scbench(
        "evaluate",
        "--executor",
        "local",
        "--problem",
        WORDSTAT,
        "--checkpoint",
        "all",
        "--submission",
        WORDSTAT / "submissions/broken",
        "--output",
        output,
        "--quiet",
    )
    assert run.returncode == 1, run.stderr
    return output / "results.json"


@pytest.mark.slow
def test_the_summary_of_a_real_failing_run(broken_run: Path) -> None:
    run = scbench("summary", broken_run)
    assert run.returncode == 0, run.stderr
    markdown = run.stdout
    assert markdown.startswith(
        "## ❌ FAILED: wordstat v1, checkpoint\\_1, checkpoint\\_2, checkpoint\\_3\n"
    )
    assert "| checkpoint\\_2 | ❌ failed | 0/8 | 0.0% | 0.0% | 75.0% | 25.0% | 23.3% |" in markdown
    section = markdown[markdown.index("### checkpoint\\_2") : markdown.index("### checkpoint\\_3")]
    assert "| Regression | 4 | 11 | 1 | 16 | 25.0% |" in section
    assert "| **All** | 7 | 22 | 1 | 30 | 23.3% |" in section
    assert section.count("<details>") == causes(broken_run, "checkpoint_2")
    assert (
        "<code>tests/test_checkpoint_2.py::test_top_matches_frequency_table</code> "
        "Functionality, error: FileNotFoundError" in section
    )
    assert "tests/test_checkpoint_2.py:82: \n" in section  # the traceback


def causes(results: Path, name: str) -> int:
    """How many causes the failing tests of the run's checkpoint `name` have."""
    checkpoint = next(c for _, c in load_results(results).checkpoints() if c.name == name)
    return len(cause_groups(checkpoint, frozenset()))


@pytest.mark.slow  # its fixture runs a real evaluation, as its neighbours' do
def test_the_summary_of_a_real_failing_run_renders(broken_run: Path) -> None:
    tags = rendered_tags(render_summary(load_results(broken_run)))
    names = ("checkpoint_1", "checkpoint_2", "checkpoint_3")
    assert tags.count("details") == sum(causes(broken_run, name) for name in names)
    assert tags.count("table") == 4


@pytest.mark.slow
def test_the_summary_subcommand_writes_a_file(broken_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    url = "https://github.com/o/r/actions/runs/1/artifacts/2"
    run = scbench("summary", broken_run, "--artifact-url", url, "--output", target)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert f"Reports, logs and results.json: [the workflow artifact]({url})." in target.read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "results.json: no such file"),
        ("{not json", "results.json: not JSON: Expecting property name"),
        ('{"schema_version": 9}', "results.json: schema_version 9 is not supported"),
        ("[]", "results.json: not a scbench-ci results.json (not a JSON object)"),
        (
            '{"schema_version": 1, "problem": {}}',
            "results.json: not a scbench-ci results file: the document: 'policy' is a required",
        ),
    ],
)
@pytest.mark.slow
def test_bad_results_are_one_line_and_exit_2(
    tmp_path: Path, content: str | None, error: str
) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    run = scbench("summary", path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith("scbench-ci: error: ") and error in run.stderr


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("status", "exploded", "checkpoints[0].tests[1].status: 'exploded' is not one of"),
        ("group", "Extra", "checkpoints[0].tests[1].group: 'Extra' is not one of"),
        ("groups", {}, "checkpoints[0].groups: 'Core' is a required property"),
        (
            "failure",
            {"kind": "x", "message": "", "log_tail": None},
            "checkpoints[0].failure.kind: 'x' is not",
        ),
        ("totals", {"passed": "1"}, "checkpoints[0].totals: 'failed' is a required property"),
    ],
)
@pytest.mark.slow
def test_a_document_with_bad_parts_is_refused(
    problem: Problem, tmp_path: Path, key: str, value: object, error: str
) -> None:
    run_result = document(problem, checkpoint_result(problem, "checkpoint_1", failing(2, "m")))
    result = json.loads(write_results(run_result, tmp_path).read_text())
    checkpoint = result["problems"][0]["checkpoints"][0]
    (checkpoint["tests"][1] if key in ("status", "group") else checkpoint)[key] = value
    path = tmp_path / "results.json"
    path.write_text(json.dumps(result))
    run = scbench("summary", path)
    assert run.returncode == 2
    assert run.stderr.startswith(f"scbench-ci: error: {path}: not a scbench-ci results file: ")
    assert f"problems[0].{error}" in run.stderr


@pytest.mark.slow
def test_a_bad_artifact_url_is_one_line_and_exit_2(problem: Problem, tmp_path: Path) -> None:
    path = write_results(
        document(problem, checkpoint_result(problem, "checkpoint_1", [])), tmp_path
    )
    run = scbench("summary", path, "--artifact-url", "javascript:alert(1)")
    assert run.returncode == 2
    assert run.stderr == (
        "scbench-ci: error: --artifact-url: not an http(s) URL: 'javascript:alert(1)'\n"
    )


def test_mentions_notify_no_one(problem: Problem) -> None:
    """Posted as a pull request comment, `@name` in a test's text would notify that user."""
    text = "pinging @octocat and @scbench/maintainers"
    tests = [make_outcome(f"test_x[{text}]", Status.FAILED, message=text)]
    result = make_run(checkpoint_result(problem, "checkpoint_1", tests))
    markdown = outside_fences(render_summary(result))
    assert "@octocat" not in markdown and "@scbench" not in markdown
    assert "pinging @\u200boctocat and @\u200bscbench/maintainers" in markdown
