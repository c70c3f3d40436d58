"""The Check Run against the REST double: created completed with every annotation, 50 a request,
its summary and text held to the API's limits, and every failure a warning."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scbench_ci.outputs.github.annotations import Annotation
from scbench_ci.outputs.github.check_run import (
    ANNOTATIONS_PER_REQUEST,
    MAX_TITLE_CHARS,
    NO_FILE,
    OUTPUT_LIMIT,
    CheckRun,
    publish_check_run,
)
from scbench_ci.outputs.github.retry import RetryPolicy
from scbench_ci.trust.markdown import Markdown, literal
from testing.rest_double import READ_TOKEN, REPOSITORY, WRITE_TOKEN, RestDouble

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=1.0, timeout_s=5.0)
SHA = "c0ffee" + "0" * 34
CHECK_RUNS = f"/repos/{REPOSITORY}/check-runs"


@pytest.fixture
def double() -> Iterator[RestDouble]:
    with RestDouble() as double:
        yield double


def failing(count: int) -> list[Annotation]:
    return [
        Annotation("error", f"assert {n} == 0", f"checkpoint_1 · Core · test_{n}", "t.py", n + 1)
        for n in range(count)
    ]


def check(annotations: list[Annotation], **fields: object) -> CheckRun:
    values: dict[str, object] = {
        "name": "scbench-demo-checkpoint_1",
        "head_sha": SHA,
        "conclusion": "failure",
        "title": "❌ FAILED",
        "summary": "FAILED (policy core-cases)",
        "text": literal("## ❌ FAILED\n\nthe summary\n"),
        "annotations": annotations,
    }
    return CheckRun(**{**values, **fields})  # type: ignore[arg-type]


def test_every_annotation_in_batches_of_fifty(double: RestDouble) -> None:
    flaky = Annotation("warning", "passed on attempt 2", "Flaky", None, None)
    annotations = [*failing(120), flaky]
    result = publish_check_run(check(annotations), double.environment(), WRITE_TOKEN, retry=FAST)
    assert (result.warning, result.annotations) == (None, 121)
    (created,) = double.check_runs_on(SHA)
    assert result.url == f"https://github.com/{REPOSITORY}/runs/{created.id}"
    assert (created.name, created.status, created.conclusion) == (
        "scbench-demo-checkpoint_1",
        "completed",
        "failure",
    )
    assert (created.title, created.summary, created.text) == (
        "❌ FAILED",
        "FAILED (policy core-cases)",
        "## ❌ FAILED\n\nthe summary\n",
    )
    assert [a["title"] for a in created.annotations] == [a.title for a in annotations]
    assert created.annotations[0] == {
        "path": "t.py",
        "start_line": 1,
        "end_line": 1,
        "annotation_level": "failure",
        "message": "assert 0 == 0",
        "title": "checkpoint_1 · Core · test_0",
    }
    # An annotation about no file gets the path the API needs.
    assert created.annotations[-1]["path"] == NO_FILE
    assert created.annotations[-1]["annotation_level"] == "warning"
    calls = [(r.method, r.path, r.status) for r in double.requests]
    assert calls == [
        ("POST", CHECK_RUNS, 201),
        ("PATCH", f"{CHECK_RUNS}/{created.id}", 200),
        ("PATCH", f"{CHECK_RUNS}/{created.id}", 200),
    ]
    assert created.requests == -(-121 // ANNOTATIONS_PER_REQUEST)


def test_a_passing_run_without_annotations_is_one_request(double: RestDouble) -> None:
    result = publish_check_run(
        check([], conclusion="success", title="✅ PASSED"),
        double.environment(),
        WRITE_TOKEN,
        retry=FAST,
    )
    (created,) = double.check_runs_on(SHA)
    assert (result.annotations, created.conclusion, created.annotations) == (0, "success", [])
    assert len(double.requests) == 1


def test_summary_and_text_are_cut_to_the_api_s_limit_at_a_line(double: RestDouble) -> None:
    line = "| a &amp; b | `x` |\n"
    text = Markdown(line * (OUTPUT_LIMIT // len(line) + 10))
    result = publish_check_run(
        check([], summary=text, text=text), double.environment(), WRITE_TOKEN, retry=FAST
    )
    assert result.warning is None
    (created,) = double.check_runs_on(SHA)
    assert created.text is not None
    for shown in (created.summary, created.text):
        assert len(shown) <= OUTPUT_LIMIT
        kept, _, note = shown.rpartition("\n✂️ ")
        assert kept and set(kept.split("\n")[:-1]) == {line.rstrip("\n")}  # whole lines only
        assert note.startswith("The summary is cut here")


def test_long_titles_are_cut_to_the_api_s_limit(double: RestDouble) -> None:
    long = Annotation("error", "m", "t" * 1000, "t.py", 3)
    publish_check_run(check([long]), double.environment(), WRITE_TOKEN, retry=FAST)
    (created,) = double.check_runs_on(SHA)
    assert created.annotations[0]["title"] == "t" * MAX_TITLE_CHARS


def test_a_read_only_token_is_a_warning_naming_the_permission(double: RestDouble) -> None:
    result = publish_check_run(check(failing(3)), double.environment(), READ_TOKEN, retry=FAST)
    assert result.url is None
    assert result.warning is not None
    assert "`permissions: checks: write`" in result.warning
    assert "Resource not accessible by integration (HTTP 403)" in result.warning
    assert double.state.check_runs == []


def test_no_token_is_a_warning() -> None:
    result = publish_check_run(check([]), {}, "", retry=FAST)
    assert (result.url, result.warning) == (None, "there is no GitHub token to create it with")


def test_a_failed_update_keeps_the_check_run_and_says_how_many_it_has(double: RestDouble) -> None:
    double.fail_next(1, 422, method="PATCH", message="Validation Failed")
    result = publish_check_run(check(failing(75)), double.environment(), WRITE_TOKEN, retry=FAST)
    (created,) = double.check_runs_on(SHA)
    assert result.url is not None and result.annotations == 50
    assert result.warning == (
        f"the Check Run {result.url} has only its first 50 annotations: PATCH "
        f"{CHECK_RUNS}/{created.id} failed: Validation Failed (HTTP 422)"
    )
    assert len(created.annotations) == 50
