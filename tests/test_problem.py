from pathlib import Path

import pytest

from scbench_ci.errors import ProblemError
from scbench_ci.problem import DEFAULT_TEST_TIMEOUT_S, Group, load_problem
from tests.conftest import ProblemFolder


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


def test_unknown_checkpoint_lists_known_ones(problem_folder: ProblemFolder) -> None:
    problem = load_problem(problem_folder.root)
    with pytest.raises(ProblemError) as error:
        problem.select("checkpoint_9")
    assert str(error.value) == (
        f"{problem_folder.root.resolve() / 'config.yaml'}: checkpoints: no checkpoint "
        "'checkpoint_9' (known: checkpoint_1, checkpoint_2, checkpoint_3)"
    )


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
        ({"checkpoints": {"../up": {}}}, "checkpoints.../up: checkpoint names may hold only"),
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


def test_invalid_yaml_names_line(problem_folder: ProblemFolder) -> None:
    problem_folder.write("config.yaml", "name: demo\ncheckpoints: [\n")
    with pytest.raises(ProblemError) as error:
        load_problem(problem_folder.root)
    assert "config.yaml: invalid YAML at line 3" in str(error.value)


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


def test_missing_tests_folder_and_conftest(problem_folder: ProblemFolder) -> None:
    (problem_folder.root / "tests/conftest.py").unlink()
    with pytest.raises(ProblemError, match=r"tests/conftest.py: missing"):
        load_problem(problem_folder.root)
    for path in (problem_folder.root / "tests").iterdir():
        path.unlink()
    (problem_folder.root / "tests").rmdir()
    with pytest.raises(ProblemError, match=r"tests: missing"):
        load_problem(problem_folder.root)


def test_huge_config_is_refused(problem_folder: ProblemFolder) -> None:
    problem_folder.write("config.yaml", "# " + "x" * (1024 * 1024 + 1) + "\n")
    with pytest.raises(ProblemError, match="larger than"):
        load_problem(problem_folder.root)
