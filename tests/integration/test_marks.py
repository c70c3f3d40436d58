"""Each test's group comes from its keywords as pytest-json-report has them (examples/marks), on
both executors: the marks of the test, its class, its module and its parameters, and its
parameters' ids, for tests that end without a call phase too (a session-scoped fixture failing in
setup, a fixture failing in teardown, a skip, an xfail), with built-in and custom markers alike:
by the paper's rules (`--scbench paper`), as SCBench 1.0's run also groups a test its inventory
does not hold. By 1.0's, its inventory (marks only) decides the tests it holds:
tests/integration/test_scbench_1_0_files.py holds marks' groups to SCBench 1.0's own."""

from __future__ import annotations

import pytest

from testing.examples import SharedEvaluations
from testing.results import checkpoint_documents

EXECUTORS = ["local", "docker"]
# test -> (group, status), as SCBench's rules give it.
# fmt: off
CHECKPOINT_1 = {
    "test_greets_one_name": ("Core", "passed"),
    "test_greets_each_name": ("Core", "passed"),
    "test_names[grace]": ("Core", "passed"),
    "test_names[empty]": ("Error", "passed"),  # pytest.param(marks=error)
    "test_names[digit]": ("Error", "passed"),  # pytest.param(marks=strict), a custom marker
    "test_names[functionality]": ("Functionality", "passed"),  # its id is a keyword
    # The session-scoped fixture fails in setup: for its first user, and from pytest's cache for
    # the later ones. CTRF has no tags for any of them.
    "test_names_table_first_user": ("Functionality", "error"),
    "test_names_table_later_user": ("Functionality", "error"),
    "test_names_table_custom_mark": ("Functionality", "error"),
    "TestClassMarks::test_plain_method": ("Functionality", "passed"),
    "TestClassMarks::test_method_with_a_failing_fixture": ("Functionality", "error"),
    "TestClassMarks::test_method_with_its_own_mark": ("Error", "passed"),
    "TestClassCustomMark::test_inherits_the_custom_mark": ("Functionality", "passed"),
    "test_param_with_a_custom_mark_and_a_failing_fixture[guido]": ("Functionality", "error"),
    "test_param_with_a_custom_mark_and_a_failing_fixture[ken]": ("Functionality", "error"),
    "test_skipped_functionality": ("Functionality", "skipped"),
    "test_skipped_custom": ("Error", "skipped"),
    "test_xfailed_error": ("Error", "xfailed"),
    "test_xfailed_custom": ("Functionality", "xfailed"),
    "test_teardown_error": ("Regression", "error"),
    "test_teardown_error_custom": ("Error", "error"),
    "test_no_name_is_a_usage_error": ("Error", "passed"),
}
CHECKPOINT_2 = {  # pytestmark = pytest.mark.slow (Functionality) on the whole module
    "test_shouts": ("Functionality", "passed"),
    "test_still_greets_quietly": ("Functionality", "passed"),
    "test_shout_without_a_name": ("Error", "passed"),  # error beats a custom marker
    "test_shout_with_a_bad_name": ("Regression", "passed"),  # so does regression
}
# fmt: on


def groups_of(
    evaluations: SharedEvaluations, checkpoint: str, executor: str, test_image: str
) -> dict:
    image = ("--image", test_image) if executor == "docker" else ()
    submission = f"solutions/{checkpoint}"
    paper = ("--scbench", "paper")
    evaluated = evaluations("marks", checkpoint, submission, *image, *paper, executor=executor)
    run, results = evaluated.run, evaluated.results
    (result,) = checkpoint_documents(results)
    assert result["failure"] is None, run.stdout + run.stderr
    assert not any("differ from pytest's" in w for w in result["warnings"]), result["warnings"]
    return {t["id"].split("::", 1)[1]: (t["group"], t["status"]) for t in result["tests"]}


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize(
    ("checkpoint", "expected"), [("checkpoint_1", CHECKPOINT_1), ("checkpoint_2", CHECKPOINT_2)]
)
def test_groups_follow_the_keywords_pytest_json_report_has(
    checkpoint: str,
    expected: dict,
    executor: str,
    test_image: str,
    shared_evaluations: SharedEvaluations,
) -> None:
    assert groups_of(shared_evaluations, checkpoint, executor, test_image) == expected
