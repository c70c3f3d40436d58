"""Loading a problem folder: every field of config.yaml, its errors (file, field, line), and the
folder around it."""

import os
from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.problem.load import KeptProblems, load_problem
from scbench_ci.problem.model import DEFAULT_TEST_TIMEOUT_S, Group
from testing.problems import ProblemFolder


def test_reads_every_field(problem_folder: ProblemFolder) -> None:
    problem_folder.write("assets/words.txt", "a b c\n")
    problem_folder.config = {
        "name": "demo",
        "version": 3,
        "entry_file": "main",
        "timeout": 12,
        "test_dependencies": ["pyyaml", " requests "],
        "env": {"MODE": "strict", "LEVEL": 1},
        "markers": {
            "slow": {"description": "slow tests", "group": "Functionality"},
            "strict": {"description": "strict input", "group": "ERROR"},
        },
        "static_assets": {"words": {"path": "assets/words.txt", "save_path": "data/words.txt"}},
        "checkpoints": {
            "checkpoint_1": {"version": 2, "order": 1, "state": "Core Tests"},
            "checkpoint_2": {
                "order": 2,
                "include_prior_tests": False,
                "timeout": 5,
                "env": {"LEVEL": "2", "EXTRA": "x"},
            },
        },
    }
    problem_folder.save()
    problem = load_problem(problem_folder.root)

    assert (problem.name, problem.version, problem.entry_file) == ("demo", 3, "main")
    assert problem.test_dependencies == ("pyyaml", "requests")
    assert [(m.name, m.group) for m in problem.markers] == [
        ("slow", Group.FUNCTIONALITY),
        ("strict", Group.ERROR),
    ]
    (asset,) = problem.static_assets
    assert asset.source == (problem_folder.root / "assets/words.txt").resolve()
    assert str(asset.save_path) == "data/words.txt"
    assert asset.env_name == "SCBENCH_ASSET_WORDS"
    first, second = problem.checkpoints
    assert (first.version, first.state, first.include_prior_tests) == (2, "Core Tests", True)
    assert first.timeout_s == 12  # inherited from the problem
    assert first.env == {"MODE": "strict", "LEVEL": "1"}
    assert second.timeout_s == 5  # the checkpoint wins
    assert second.include_prior_tests is False
    assert second.env == {"MODE": "strict", "LEVEL": "2", "EXTRA": "x"}  # merged by key


def test_defaults(problem_folder: ProblemFolder) -> None:
    problem = load_problem(problem_folder.root)
    assert problem.version == 1
    assert problem.markers == () and problem.static_assets == ()
    assert [c.timeout_s for c in problem.checkpoints] == [DEFAULT_TEST_TIMEOUT_S] * 3
    assert all(c.include_prior_tests for c in problem.checkpoints)


def test_order_field_beats_position(problem_folder: ProblemFolder) -> None:
    problem_folder.config["checkpoints"] = {
        "checkpoint_1": {"order": 2},
        "checkpoint_2": {"order": 3},
        "checkpoint_3": {"order": 1},
    }
    problem_folder.save()
    problem = load_problem(problem_folder.root)
    assert [c.name for c in problem.checkpoints] == ["checkpoint_3", "checkpoint_1", "checkpoint_2"]
    assert [c.name for c in problem.prior_checkpoints(problem.checkpoint("checkpoint_2"))] == [
        "checkpoint_3",
        "checkpoint_1",
    ]
    assert [c.name for c in problem.select("all")] == [
        "checkpoint_3",
        "checkpoint_1",
        "checkpoint_2",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"markers": {"slow": {"group": "Speed"}}}, "markers.slow.group: unknown group 'Speed'"),
        ({"markers": {"error": {"group": "Core"}}}, "markers.error: is a built-in marker"),
        ({"markers": {"bad name": {"group": "Core"}}}, "markers.bad name: is not a valid pytest"),
        (
            {"static_assets": {"x": {"path": "../outside"}}},
            "static_assets.x.path: '../outside' leaves the problem folder",
        ),
        (
            {"static_assets": {"x": {"path": "/etc/passwd"}}},
            "static_assets.x.path: '/etc/passwd' leaves the problem folder",
        ),
        ({"static_assets": {"x": {"path": "missing"}}}, "static_assets.x.path: 'missing' does not"),
        (
            {"static_assets": {"x": {"path": "tests", "save_path": "../x"}}},
            "static_assets.x.save_path: '../x' must stay inside tests/assets",
        ),
        ({"timeout": -1}, "timeout: must be a positive number of seconds, got -1"),
        ({"timeout": "soon"}, "timeout: must be a positive number of seconds, got 'soon'"),
        ({"entry_file": None}, "entry_file: is required"),
        ({"name": ["x"]}, "name: must be a non-empty string"),
        ({"checkpoints": {}}, "checkpoints: must name at least one checkpoint"),
        ({"checkpoints": {"../up": {}}}, "checkpoints.../up: checkpoint names are 1 to 100"),
        (
            {"checkpoints": {"checkpoint_1": {"include_prior_tests": "yes"}}},
            "checkpoints.checkpoint_1.include_prior_tests: must be true or false, got 'yes'",
        ),
        (
            {"checkpoints": {"checkpoint_1": {"env": {"A": [1]}}}},
            "checkpoints.checkpoint_1.env.A: must be a string",
        ),
        ({"test_dependencies": "pyyaml"}, "test_dependencies: must be a list of strings"),
        ({"env": ["A=1"]}, "env: must be a mapping, got list"),
        # Values Python reads but cannot use: not finite, or with a NUL (no argv, environment
        # variable or file name may hold one).
        ({"timeout": float("nan")}, "timeout: must be a positive number of seconds, got nan"),
        ({"timeout": float("inf")}, "timeout: must be a positive number of seconds, got inf"),
        ({"version": float("inf")}, "version: must be an integer, got inf"),
        (
            {"checkpoints": {"checkpoint_1": {"order": float("nan")}}},
            "checkpoints.checkpoint_1.order: must be an integer, got nan",
        ),
        ({"name": "de\0mo"}, "name: must not hold a NUL character, got 'de\\x00mo'"),
        ({"env": {"A": "x\0"}}, "env.A: must not hold a NUL character"),
        ({"test_dependencies": ["a\0"]}, "test_dependencies[0]: must not hold a NUL character"),
        (
            {"static_assets": {"x\0": {"path": "tests"}}},
            "static_assets.x\\x00: must not hold a NUL character",
        ),
        (
            {"static_assets": {"x": {"path": "tests", "save_path": "a\0"}}},
            "static_assets.x.save_path: must not hold a NUL character",
        ),
        # An asset's name becomes its entry in .evaluation_tests/assets/ and its variable's name.
        (
            {"static_assets": {"../../x": {"path": "tests"}}},
            "static_assets.../../x: must be named by one file name without =",
        ),
        ({"static_assets": {"..": {"path": "tests"}}}, "static_assets...: must be named by one"),
        ({"static_assets": {"a=b": {"path": "tests"}}}, "static_assets.a=b: must be named by one"),
        # A name is printable and bounded (trust/names.py).
        ({"name": "demo\x1b]0;owned\x07"}, "name: 'demo\\x1b]0;owned\\x07' holds \\x1b, a char"),
        ({"name": "demo\u202e"}, "name: 'demo\\u202e' holds \\u202e, a character that is not"),
        ({"name": "d" * 256}, "name: 'ddd"),
        # Checkpoint names become file and folder names.
        ({"checkpoints": {"a\nb": {}}}, "checkpoints.a\\nb: checkpoint names are 1 to 100"),
        ({"checkpoints": {"c" * 101: {}}}, "checkpoints.ccc"),
        ({"checkpoints": {"-rf": {}}}, "checkpoints.-rf: checkpoint names are 1 to 100"),
        ({"checkpoints": {".hidden": {}}}, "checkpoints..hidden: checkpoint names are 1 to 100"),
        (
            {"static_assets": {"x": {"path": "tests", "save_path": "/abs"}}},
            "static_assets.x.save_path: '/abs' must stay inside tests/assets",
        ),
        (
            {"static_assets": {"x": {"path": "tests", "save_path": "a/" + "b" * 256}}},
            f"static_assets.x.save_path: 'a/{'b' * 194}... holds a name longer than 255 bytes",
        ),
        (
            {
                "static_assets": {
                    "a": {"path": "tests", "save_path": "data"},
                    "b": {"path": "tests/conftest.py", "save_path": "data/conftest.py"},
                }
            },
            "static_assets.b.save_path: 'data/conftest.py' overlaps static_assets.a's 'data'",
        ),
    ],
)
def test_bad_fields_name_file_and_field(
    problem_folder: ProblemFolder, change: dict[str, object], expected: str
) -> None:
    problem_folder.config.update(change)
    problem_folder.save()
    with pytest.raises(ProblemError) as error:
        load_problem(problem_folder.root)
    config = problem_folder.root.resolve() / "config.yaml"
    assert str(error.value).startswith(f"{config}: {expected}")
    assert "\n" not in str(error.value)


def test_marker_groups_are_case_insensitive(problem_folder: ProblemFolder) -> None:
    problem_folder.config["markers"] = {
        "a": {"group": "functionality"},
        "b": {"group": "FUNCTIONALITY"},
        "c": {"group": "Regression"},
    }
    problem_folder.save()
    groups = [m.group for m in load_problem(problem_folder.root).markers]
    assert groups == [Group.FUNCTIONALITY, Group.FUNCTIONALITY, Group.REGRESSION]


def test_config_must_be_a_mapping(problem_folder: ProblemFolder) -> None:
    problem_folder.write("config.yaml", "- a\n- b\n")
    with pytest.raises(ProblemError, match=r"config\.yaml: must be a YAML mapping"):
        load_problem(problem_folder.root)


def test_missing_config(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    with pytest.raises(ProblemError, match=r"config.yaml: missing"):
        load_problem(tmp_path)


def test_missing_problem_folder(tmp_path: Path) -> None:
    with pytest.raises(ProblemError, match="problem folder does not exist"):
        load_problem(tmp_path / "nope")


def test_a_problem_folder_s_name_is_a_name(tmp_path: Path) -> None:
    """The folder's name names the problem in results.json and every output."""
    folder = ProblemFolder(tmp_path / "demo\x1b[2J\u202e").save()
    with pytest.raises(ProblemError) as error:
        load_problem(folder.root)
    assert str(error.value) == (
        f"{tmp_path}: the problem folder's name 'demo\\x1b[2J\\u202e' holds \\x1b, a character "
        "that is not printable (a control, bidirectional or format character, or a line separator)"
    )


def test_missing_tests_folder_and_conftest(problem_folder: ProblemFolder) -> None:
    (problem_folder.root / "tests/conftest.py").unlink()
    with pytest.raises(ProblemError, match=r"tests/conftest.py: missing"):
        load_problem(problem_folder.root)
    for path in (problem_folder.root / "tests").iterdir():
        path.unlink()
    (problem_folder.root / "tests").rmdir()
    with pytest.raises(ProblemError, match=r"tests: missing"):
        load_problem(problem_folder.root)


def test_long_values_are_cut_in_messages(problem_folder: ProblemFolder) -> None:
    problem_folder.config["timeout"] = "x" * 100_000
    problem_folder.save()
    with pytest.raises(ProblemError) as error:
        load_problem(problem_folder.root)
    assert str(error.value).endswith(
        "timeout: must be a positive number of seconds, got '" + "x" * 196 + "..."
    )


def test_config_must_be_a_regular_file_in_the_problem(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    config = problem_folder.root / "config.yaml"
    outside = tmp_path / "outside.yaml"
    config.rename(outside)
    config.symlink_to(outside)
    with pytest.raises(ProblemError, match=r"config\.yaml: is a symlink that leaves the problem"):
        load_problem(problem_folder.root)
    config.unlink()
    config.symlink_to("config.yaml")
    with pytest.raises(ProblemError, match=r"config\.yaml: cannot be read: Too many levels"):
        load_problem(problem_folder.root)
    config.unlink()
    config.mkdir()
    with pytest.raises(ProblemError, match=r"config\.yaml: is not a regular file"):
        load_problem(problem_folder.root)
    config.rmdir()
    os.mkfifo(config)
    with pytest.raises(ProblemError, match=r"config\.yaml: is not a regular file"):
        load_problem(problem_folder.root)
    config.unlink()
    (problem_folder.root / "shared").mkdir()
    outside.rename(problem_folder.root / "shared/config.yaml")
    config.symlink_to("shared/config.yaml")
    assert load_problem(problem_folder.root).name == "demo"  # a symlink within the problem


def test_tests_folder_and_conftest_stay_in_the_problem(
    problem_folder: ProblemFolder, tmp_path: Path
) -> None:
    tests = problem_folder.root / "tests"
    conftest = tests / "conftest.py"
    conftest.rename(tmp_path / "conftest.py")
    conftest.symlink_to(tmp_path / "conftest.py")
    with pytest.raises(ProblemError, match=r"tests/conftest\.py: is a symlink that leaves"):
        load_problem(problem_folder.root)
    tests.rename(tmp_path / "tests")
    tests.symlink_to(tmp_path / "tests")
    with pytest.raises(ProblemError, match=r"/tests: is a symlink that leaves the problem"):
        load_problem(problem_folder.root)


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ({"tests/assets": "link"}, "tests/assets is a symlink in the problem folder"),
        ({"tests/assets/data": "link"}, "tests/assets/data is a symlink in the problem folder"),
        (
            {"tests/assets/data/words.txt": "link"},
            "tests/assets/data/words.txt is a symlink in the problem folder",
        ),
        ({"tests/assets/data": "file"}, "tests/assets/data is a file in the problem folder"),
        (
            {"tests/assets/data/words.txt": "file"},
            "tests/assets/data/words.txt already exists in the problem folder",
        ),
    ],
)
def test_an_asset_is_not_written_through_the_problem_s_tests_folder(
    problem_folder: ProblemFolder, tmp_path: Path, layout: dict[str, str], expected: str
) -> None:
    """The workspace holds a copy of tests/ (symlinks copied as links); the asset goes in after."""
    problem_folder.write("words.txt", "a b c\n")
    problem_folder.config["static_assets"] = {
        "words": {"path": "words.txt", "save_path": "data/words.txt"}
    }
    problem_folder.save()
    for relative, kind in layout.items():
        path = problem_folder.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            path.symlink_to(tmp_path)
        else:
            path.write_text("")
    with pytest.raises(ProblemError) as error:
        load_problem(problem_folder.root)
    assert str(error.value).endswith(f"static_assets.words.save_path: {expected}")


def test_an_asset_path_that_loops(problem_folder: ProblemFolder) -> None:
    (problem_folder.root / "loop").symlink_to("loop")
    problem_folder.config["static_assets"] = {"x": {"path": "loop"}}
    problem_folder.save()
    with pytest.raises(ProblemError, match=r"static_assets\.x\.path: 'loop': Too many levels"):
        load_problem(problem_folder.root)


def test_kept_problems_are_loaded_again_once_their_config_changes(
    problem_folder: ProblemFolder,
) -> None:
    kept = KeptProblems()
    first = kept.load(problem_folder.root)
    assert kept.load(problem_folder.root) is first
    problem_folder.config["timeout"] = 7
    problem_folder.save()
    changed = kept.load(problem_folder.root)
    assert [c.timeout_s for c in changed.checkpoints] == [7] * 3
    (problem_folder.root / "config.yaml").unlink()
    with pytest.raises(ProblemError, match="missing"):
        kept.load(problem_folder.root)
