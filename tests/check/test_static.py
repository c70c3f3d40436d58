from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from scbench_ci.check.static import static_findings
from scbench_ci.foundation.scbench_runner import PAPER
from scbench_ci.results.findings import Finding, Severity, Stage
from testing.paths import CHECK_REPO_PROBLEMS, EXAMPLES, REPO_ROOT

E, W = Severity.ERROR, Severity.WARNING


def found(findings: list[Finding]) -> list[tuple[str, int | None, Severity, str]]:
    """What a test compares: file, line, severity and message."""
    assert all(finding.stage == Stage.STATIC for finding in findings)
    return [(f.file, f.line, f.severity, f.message) for f in findings]


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    """A copy of the clean problem, for a test to give one defect."""
    return Path(shutil.copytree(CHECK_REPO_PROBLEMS / "clean", tmp_path / "clean"))


@pytest.mark.parametrize(
    "root",
    [CHECK_REPO_PROBLEMS / "clean", *sorted(path for path in EXAMPLES.iterdir() if path.is_dir())],
    ids=lambda path: path.name,
)
def test_clean_problems_and_the_examples_have_no_findings(root: Path) -> None:
    """But the warnings of the markers that give a group of their own, which SCBench 1.0's
    inventory does not read: wordstat's and marks' show how such markers are used."""
    findings, problem = static_findings(root)
    assert [f for f in findings if GROUP_MARKER not in f.message] == []
    assert all(f.severity is Severity.WARNING for f in findings)
    assert bool(findings) == (root.name in ("wordstat", "marks"))
    assert problem is not None and problem.root == root.resolve()


GROUP_MARKER = "but SCBench 1.0's inventory, which decides the groups, reads only error"


MARKER_MESSAGE = (
    "marker 'edge_case' is not registered: a test it marks counts as Core; declare it in "
    "config.yaml's markers (with its group) or use a built-in one"
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "missing_test_file",
            [
                (
                    "missing_test_file/config.yaml",
                    10,
                    E,
                    "checkpoint 'checkpoint_2' has no test file tests/test_checkpoint_2.py",
                )
            ],
        ),
        (
            "missing_spec",
            [
                (
                    "missing_spec/config.yaml",
                    6,
                    E,
                    "checkpoint 'checkpoint_1' has no spec checkpoint_1.md",
                )
            ],
        ),
        (
            "bad_config",
            [
                (
                    "bad_config/config.yaml",
                    4,
                    E,
                    "timeout: must be a positive number of seconds, got 'soon'",
                )
            ],
        ),
        (
            "unregistered_marker",
            [("unregistered_marker/tests/test_checkpoint_1.py", 11, E, MARKER_MESSAGE)],
        ),
        (
            "conftest_without_option",
            [
                (
                    "conftest_without_option/tests/conftest.py",
                    10,
                    E,
                    "registers no --checkpoint option: the evaluator runs pytest with "
                    "--checkpoint=..., so pytest_addoption must call "
                    "parser.addoption('--checkpoint')",
                )
            ],
        ),
        (
            "duplicate_test_name",
            [
                (
                    "duplicate_test_name/tests/test_checkpoint_1.py",
                    15,
                    E,
                    "test_each_word is defined again: the one at line 11 is replaced by this "
                    "one and never runs",
                )
            ],
        ),
        # The dynamic defects: statically clean.
        ("collection_error", []),
        ("no_solutions", []),
        ("oracle_failure", []),
        ("known_failure_passes", []),
        ("vacuous_test", []),
        ("flaky_test", []),
        ("slow_test", []),
    ],
)
def test_each_defective_problem_gives_exactly_its_findings(
    name: str, expected: list[tuple[str, int | None, Severity, str]]
) -> None:
    findings, problem = static_findings(CHECK_REPO_PROBLEMS / name)
    assert found(findings) == expected
    assert (problem is None) == (name == "bad_config")


def test_the_missing_file_s_checkpoint_is_named() -> None:
    (finding,) = static_findings(CHECK_REPO_PROBLEMS / "missing_test_file")[0]
    assert finding.checkpoint == "checkpoint_2"


def test_files_are_named_relative_to_the_repository_root_given() -> None:
    (finding,) = static_findings(CHECK_REPO_PROBLEMS / "missing_spec", relative_to=REPO_ROOT)[0]
    assert finding.file == "tests/data/check_repo/problems/missing_spec/config.yaml"


def test_every_bad_config_field_at_once_each_on_its_line(clean: Path) -> None:
    write(
        clean,
        "config.yaml",
        """
        name: clean
        entry_file: shout
        timeout: -1
        env:
          GOOD: "1"
          bad name: "x"
        markers:
          slow:
            group: Speed
          error:
            group: Core
          quick:
        test_dependencies: [pyyaml, "", 3]
        checkpoints:
          checkpoint_1:
            include_prior_tests: "yes"
            timeout: 0
          ../up: {}
          checkpoint_2:
        """,
    )
    findings, problem = static_findings(clean)
    assert problem is None
    assert [(f.line, f.message) for f in findings] == [
        (3, "timeout: must be a positive number of seconds, got -1"),
        (6, "env.bad name: is not a valid environment variable name"),
        (
            9,
            "markers.slow.group: unknown group 'Speed' (one of Core, Functionality, Error, "
            "Regression)",
        ),
        (10, "markers.error: is a built-in marker and cannot be redefined"),
        (12, "markers.quick.group: is required"),
        (13, "test_dependencies[1]: must be a non-empty string, got ''"),
        (13, "test_dependencies[2]: must be a non-empty string, got 3"),
        (
            16,
            "checkpoints.checkpoint_1.include_prior_tests: must be true or false, got 'yes'",
        ),
        (17, "checkpoints.checkpoint_1.timeout: must be a positive number of seconds, got 0"),
        (18, "checkpoints.../up: " + CHECKPOINT_NAME_RULE),
    ]
    assert {f.file for f in findings} == {"clean/config.yaml"}


CHECKPOINT_NAME_RULE = (
    "checkpoint names are 1 to 100 letters, digits, '_', '-' and '.', not starting with '-' or '.'"
)


def test_lines_of_values_in_flow_style_lists_and_anchors(clean: Path) -> None:
    write(
        clean,
        "config.yaml",
        """
        name: clean
        entry_file: shout
        defaults: &defaults
          timeout: soon
        checkpoints:
          checkpoint_1: *defaults
          checkpoint_2: {timeout: 2, env: {A: [1]}}
        """,
    )
    assert [(f.line, f.message) for f in static_findings(clean)[0]] == [
        # An alias's value is where its anchor is.
        (4, "checkpoints.checkpoint_1.timeout: must be a positive number of seconds, got 'soon'"),
        (7, "checkpoints.checkpoint_2.env.A: must be a string, got [1]"),
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("name: x\ncheckpoints: [\n", 3, "invalid YAML at line 3, column 1"),
        ("- a\n", 1, "must be a YAML mapping of fields"),
    ],
)
def test_a_config_that_cannot_be_read_is_one_finding(
    clean: Path, text: str, line: int, message: str
) -> None:
    (clean / "config.yaml").write_text(text)
    findings, problem = static_findings(clean)
    assert problem is None
    assert [(f.file, f.line) for f in findings] == [("clean/config.yaml", line)]
    assert findings[0].message.startswith(message)


def test_the_tests_are_checked_even_when_the_config_is_bad(clean: Path) -> None:
    (clean / "config.yaml").write_text("name: clean\n")
    (clean / "tests/conftest.py").write_text("import pytest\n")
    findings = static_findings(clean)[0]
    assert [(f.file, f.line, f.message.split(":")[0]) for f in findings] == [
        # A missing field is reported where the mapping that should hold it starts.
        ("clean/config.yaml", 1, "checkpoints"),
        ("clean/config.yaml", 1, "entry_file"),
        ("clean/tests/conftest.py", None, "registers no --entrypoint option"),
        ("clean/tests/conftest.py", None, "registers no --checkpoint option"),
        ("clean/tests/conftest.py", None, "defines no entrypoint_argv fixture"),
        ("clean/tests/conftest.py", None, "defines no checkpoint_name fixture"),
    ]


def test_missing_tests_folder_and_conftest(clean: Path) -> None:
    (clean / "tests/conftest.py").unlink()
    assert found(static_findings(clean)[0]) == [
        (
            "clean/tests/conftest.py",
            None,
            E,
            "missing (it registers --entrypoint and --checkpoint for the tests)",
        )
    ]
    shutil.rmtree(clean / "tests")
    assert found(static_findings(clean)[0]) == [
        ("clean/tests", None, E, "missing (a problem keeps its pytest files in tests/)")
    ]


def test_missing_files_of_every_checkpoint(clean: Path) -> None:
    (clean / "checkpoint_2.md").unlink()
    shutil.rmtree(clean / "solutions/checkpoint_1")
    (clean / "tests/test_checkpoint_2.py").unlink()
    findings = static_findings(clean)[0]
    assert [(f.line, f.checkpoint, f.message) for f in findings] == [
        (
            6,
            "checkpoint_1",
            "checkpoint 'checkpoint_1' has no reference solution solutions/checkpoint_1",
        ),
        (
            10,
            "checkpoint_2",
            "checkpoint 'checkpoint_2' has no test file tests/test_checkpoint_2.py",
        ),
        (10, "checkpoint_2", "checkpoint 'checkpoint_2' has no spec checkpoint_2.md"),
    ]


def test_solutions_are_looked_for_only_where_the_problem_ships_them(clean: Path) -> None:
    shutil.rmtree(clean / "solutions")
    assert static_findings(clean)[0] == []


def test_a_missing_static_asset_is_found_on_its_line(clean: Path) -> None:
    config = (clean / "config.yaml").read_text()
    (clean / "config.yaml").write_text(
        config + "static_assets:\n  corpus:\n    path: data/corpus\n"
    )
    assert found(static_findings(clean)[0]) == [
        ("clean/config.yaml", 16, E, "static_assets.corpus.path: 'data/corpus' does not exist")
    ]


def test_options_and_fixtures_in_every_way_a_conftest_may_offer_them(clean: Path) -> None:
    write(
        clean,
        "tests/conftest.py",
        """
        import shlex

        import pytest as pt
        from pytest import fixture as make_fixture


        def pytest_addoption(parser):
            group = parser.getgroup("scbench")
            group.addoption("--entrypoint", "-E")
            parser.addoption("--checkpoint")


        @make_fixture
        def entrypoint_argv(request):
            return shlex.split(request.config.getoption("--entrypoint"))


        @pt.fixture(scope="session", name="checkpoint_name")
        def _checkpoint(request):
            return request.config.getoption("--checkpoint")
        """,
    )
    assert static_findings(clean)[0] == []


def test_a_conftest_without_any_option_or_fixture(clean: Path) -> None:
    write(
        clean,
        "tests/conftest.py",
        """
        import pytest


        def pytest_addoption(parser):
            parser.addoption("--entry-point")


        def entrypoint_argv():  # not a fixture
            return []


        @pytest.fixture(name="checkpoint")
        def checkpoint_name():
            return ""
        """,
    )
    assert [(f.line, f.message.split(":")[0]) for f in static_findings(clean)[0]] == [
        (None, "defines no entrypoint_argv fixture"),
        (None, "defines no checkpoint_name fixture"),
        (4, "registers no --entrypoint option"),
        (4, "registers no --checkpoint option"),
    ]


def test_every_use_of_an_unknown_marker_is_found_on_its_line(clean: Path) -> None:
    (clean / "config.yaml").write_text(
        (clean / "config.yaml").read_text()
        + "markers:\n  slow:\n    description: slow ones\n    group: Functionality\n"
    )
    write(
        clean,
        "tests/test_checkpoint_1.py",
        """
        import pytest
        import pytest as pt
        from pytest import mark

        pytestmark = [pytest.mark.slow, pytest.mark.module_wide]


        @pytest.mark.parametrize(
            "x",
            [1, pytest.param(2, marks=pytest.mark.in_param), pytest.param(3, marks=[mark.slow])],
        )
        @pytest.mark.timeout(5)
        @pytest.mark.functionality
        def test_a(x):
            pass


        @pt.mark.flaky(reruns=2)
        class TestB:
            @mark.error
            @mark.regression
            @pytest.mark.skipif(True, reason="no")
            @pytest.mark.xfail
            @pytest.mark.usefixtures("tmp_path")
            @pytest.mark.filterwarnings("ignore")
            @pytest.mark.skip
            def test_b(self):
                pass


        def test_c(request):
            request.node.add_marker(pytest.mark.dynamic)
            request.applymarker(pytest.mark.in_param)
        """,
    )
    findings = [f for f in static_findings(clean)[0] if GROUP_MARKER not in f.message]
    assert [(f.file, f.line, f.message.split(" is ")[0]) for f in findings] == [
        ("clean/tests/test_checkpoint_1.py", 5, "marker 'module_wide'"),
        ("clean/tests/test_checkpoint_1.py", 10, "marker 'in_param'"),
        ("clean/tests/test_checkpoint_1.py", 18, "marker 'flaky'"),
        ("clean/tests/test_checkpoint_1.py", 32, "marker 'dynamic'"),
        ("clean/tests/test_checkpoint_1.py", 33, "marker 'in_param'"),
    ]


def test_a_marker_that_gives_a_group_is_warned_of_on_each_use(clean: Path) -> None:
    """SCBench 1.0's inventory reads `-m error`, `-m functionality` and `-m regression` only:
    a marker of the problem's own that gives another group than Core gives none under it."""
    config = (clean / "config.yaml").read_text()
    (clean / "config.yaml").write_text(
        config.replace(
            "checkpoints:",
            "markers:\n  slow:\n    description: slow\n    group: Functionality\n"
            "  plain:\n    description: plain\n    group: Core\ncheckpoints:",
            1,
        )
    )
    write(
        clean,
        "tests/test_checkpoint_2.py",
        """
        import pytest

        pytestmark = pytest.mark.slow


        @pytest.mark.plain
        def test_plain(entrypoint_argv):
            assert entrypoint_argv


        @pytest.mark.error
        @pytest.mark.slow
        def test_both(entrypoint_argv):
            assert entrypoint_argv
        """,
    )
    findings, _ = static_findings(clean)
    assert [(f.file, f.line, f.severity) for f in findings] == [
        ("clean/tests/test_checkpoint_2.py", 3, W),
        ("clean/tests/test_checkpoint_2.py", 12, W),
    ]
    assert findings[0].message == (
        "marker 'slow' puts its tests in Functionality (config.yaml), but SCBench 1.0's "
        "inventory, which decides the groups, reads only error, functionality and regression: "
        "under SCBench 1.0 they are Core, unless marked with one of those too"
    )
    assert static_findings(clean, scbench=PAPER)[0] == []  # --scbench paper reads them


def test_a_checkpoint_name_part_of_another_is_warned_of_on_its_line(clean: Path) -> None:
    """`-k checkpoint_1` matches checkpoint_10's tests too (pytest's `-k` is a substring match,
    whatever the case)."""
    findings, _ = static_findings(REPO_ROOT / "tests/data/inventory/keywords")
    (finding,) = [f for f in findings if f.file.endswith("config.yaml")]
    assert (finding.line, finding.severity) == (15, W)
    assert finding.message == (
        "`-k checkpoint_1`, with which SCBench 1.0 collects checkpoint 'checkpoint_1''s tests for "
        "its inventory, also matches 'checkpoint_10' (a substring, whatever the case): its passes "
        "take their tests too, and any test whose name holds it; names that are no part of one "
        "another avoid it"
    )
    assert not [f for f in static_findings(clean)[0] if f.file.endswith("config.yaml")]
    paper, _ = static_findings(REPO_ROOT / "tests/data/inventory/keywords", scbench=PAPER)
    assert not [f for f in paper if f.file.endswith("config.yaml")]


def test_markers_the_conftest_registers_are_known(clean: Path) -> None:
    """As SCBench's problems register theirs (dynamic_buffer's conftest registers
    `timeout(seconds)` in `pytest_configure`): pytest knows them, SCBench raises nothing. The
    conftest is parsed, never run; a marker registered nowhere is still reported."""
    conftest = clean / "tests/conftest.py"
    conftest.write_text(
        conftest.read_text()
        + textwrap.dedent(
            """

            def pytest_configure(config):
                \"\"\"Register custom markers.\"\"\"
                config.addinivalue_line(
                    "markers", "network(host): needs a host to connect to"
                )
                config.addinivalue_line("markers", "slow_case: takes a while")
                config.addinivalue_line("filterwarnings", "nothing: not a marker")
                raise SystemExit("never run")
            """
        )
    )
    write(
        clean,
        "tests/test_checkpoint_1.py",
        """
        import pytest


        @pytest.mark.network("localhost")
        @pytest.mark.slow_case
        def test_a():
            pass


        @pytest.mark.nothing
        def test_b():
            pass
        """,
    )
    findings = static_findings(clean)[0]
    assert [(f.file, f.line, f.message.split(" is ")[0]) for f in findings] == [
        ("clean/tests/test_checkpoint_1.py", 10, "marker 'nothing'"),
    ]


def test_marks_of_something_else_than_pytest_are_not_markers(clean: Path) -> None:
    write(
        clean,
        "tests/test_checkpoint_1.py",
        """
        class Grades:
            mark = None


        def test_a():
            grades = Grades()
            assert grades.mark is None
        """,
    )
    assert static_findings(clean)[0] == []


def test_test_files_outside_the_convention(clean: Path) -> None:
    for relative in (
        "tests/test_checkpoint_3.py",
        "tests/helpers_test.py",
        "tests/data/test_sample.py",
        "tests/helpers.py",
        "tests/data/sample.py",
    ):
        write(clean, relative, "VALUE = 1\n")
    collected_everywhere = (
        "pytest collects it with the tests of every checkpoint: test files are "
        "tests/test_<checkpoint>.py"
    )
    assert found(static_findings(clean)[0]) == [
        ("clean/tests/data/test_sample.py", None, W, collected_everywhere),
        ("clean/tests/helpers_test.py", None, W, collected_everywhere),
        (
            "clean/tests/test_checkpoint_3.py",
            None,
            E,
            "is no checkpoint's test file (tests/test_<checkpoint>.py of a checkpoint in "
            "config.yaml): it is never copied, so its tests never run",
        ),
    ]


def test_tests_defined_twice_in_a_module_or_a_class(clean: Path) -> None:
    write(
        clean,
        "tests/test_checkpoint_1.py",
        """
        import pytest


        def helper():
            return 1


        def helper():  # not a test: shadowing it is no concern of the check
            return 2


        def test_a():
            pass


        class TestA:
            def test_a(self):
                pass

            async def test_a(self):
                pass


        async def test_a():
            pass


        class TestA:
            pass


        @pytest.mark.parametrize("x", [1])
        def test_a(x):
            pass
        """,
    )
    assert [(f.line, f.message) for f in static_findings(clean)[0]] == [
        (
            20,
            "TestA.test_a is defined again: the one at line 17 is replaced by this one and "
            "never runs",
        ),
        (24, "test_a is defined again: the one at line 12 is replaced by this one and never runs"),
        (28, "TestA is defined again: the one at line 16 is replaced by this one and never runs"),
        # A decorated function is where its `def` is.
        (33, "test_a is defined again: the one at line 24 is replaced by this one and never runs"),
    ]


def test_parametrize_ids_given_twice(clean: Path) -> None:
    write(
        clean,
        "tests/test_checkpoint_1.py",
        """
        import pytest
        from pytest import param

        IDS = ["a", "a"]


        @pytest.mark.parametrize("x", [1, 2, 3], ids=["a", "b", "a"])
        def test_ids(x):
            pass


        @pytest.mark.parametrize(
            "x",
            [
                pytest.param(1, id="one"),
                param(2, id="two"),
                pytest.param(3),
                pytest.param(4, id="one"),
            ],
            ids=["x", "y", "two", "z"],
        )
        def test_params(x):
            pass


        @pytest.mark.parametrize("x", [1, 2], ids=IDS)
        @pytest.mark.parametrize("y", [1, 2], ids=str)
        @pytest.mark.parametrize("z", [pytest.param(1, id="a")], ids=["a"])
        def test_not_literal_or_overridden(x, y, z):
            pass


        @pytest.mark.parametrize("x", [1])
        @pytest.mark.parametrize("y", [1], ids=["a"])
        @pytest.mark.parametrize("z", [1], ids=["a"])
        def test_same_id_in_two_parametrizes_is_fine(x, y, z):
            pass
        """,
    )
    assert [(f.line, f.message) for f in static_findings(clean)[0]] == [
        (7, "parametrize id 'a' is given twice (first at line 7): pytest renames both cases"),
        (18, "parametrize id 'one' is given twice (first at line 15): pytest renames both cases"),
        # pytest.param(3) has no id of its own: its `ids` entry is its id.
        (20, "parametrize id 'two' is given twice (first at line 16): pytest renames both cases"),
    ]


def test_a_file_this_python_cannot_parse_is_a_warning(clean: Path) -> None:
    write(clean, "tests/test_checkpoint_2.py", "def test_a(:\n    pass\n")
    (finding,) = static_findings(clean)[0]
    assert (finding.file, finding.line, finding.severity) == (
        "clean/tests/test_checkpoint_2.py",
        1,
        W,
    )
    assert finding.message.startswith("not checked: Python 3.")


def test_known_failures_are_checked_with_the_problem(clean: Path) -> None:
    write(
        clean,
        "tests/known_failures.txt",
        """
        tests/test_checkpoint_1.py::test_each_word  # a reason
        tests/test_checkpoint_1.py::test_one_word
        """,
    )
    assert found(static_findings(clean)[0]) == [
        (
            "clean/tests/known_failures.txt",
            2,
            E,
            "'tests/test_checkpoint_1.py::test_one_word' gives no reason: write "
            "'<test id>  # <reason>'",
        )
    ]


def test_a_file_nested_too_deeply_to_parse_is_a_warning(clean: Path) -> None:
    write(clean, "tests/helpers.py", "X = " + "-" * 100_000 + "1\n")
    (finding,) = static_findings(clean)[0]
    assert (finding.file, finding.severity) == ("clean/tests/helpers.py", W)
    assert finding.message.startswith("not checked: Python 3.")
