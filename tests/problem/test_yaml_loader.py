"""The hardened YAML loader: safe tags only, capped in bytes, in depth and in size once aliases
are expanded, and every error and key with its line."""

import textwrap
from pathlib import Path

import pytest

from scbench_ci.foundation.errors import ProblemError
from scbench_ci.problem.yaml_loader import (
    MAX_CONFIG_BYTES,
    ConfigError,
    read_yaml,
    read_yaml_lines,
)


def yaml_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_invalid_yaml_names_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        read_yaml(yaml_file(tmp_path, "name: demo\ncheckpoints: [\n"))
    assert "config.yaml: invalid YAML at line 3" in str(error.value)
    assert error.value.line == 3


def test_huge_file_is_refused(tmp_path: Path) -> None:
    path = yaml_file(tmp_path, "# " + "x" * (MAX_CONFIG_BYTES + 1) + "\n")
    with pytest.raises(ProblemError, match=f"larger than {MAX_CONFIG_BYTES} bytes"):
        read_yaml(path)


BOMB = "".join(
    f"l{level}: &l{level} [{', '.join([f'*l{level - 1}' if level > 1 else 'lol'] * 9)}]\n"
    for level in range(1, 10)
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BOMB + "name: *l9\n", "refused YAML at line 5, column 5: more than 10000 values once"),
        ("name: " + "[" * 5000 + "]" * 5000, "refused YAML at line 1, column 38: nested deeper"),
        (
            "name:" + "".join("\n" + "  " * depth + "a:" for depth in range(1, 40)),
            "refused YAML at line 32, column 63: nested deeper than 32 levels",
        ),
        # Shallow as written, deep once the aliases are expanded.
        (
            "".join(f"d{n}: &d{n} [*d{n - 1}]\n" for n in range(1, 40)).replace("*d0", "1"),
            "refused YAML at line 32, column 6: nested deeper than 32 levels once its aliases",
        ),
        ("env: &env {A: *env}", "refused YAML at line 1, column 15: an alias refers to a node"),
        ("env: [" + "1, " * 20_000 + "]", "refused YAML at line 1, column 29998: more than 10000"),
        ("name: !!python/name:os.system", "invalid YAML at line 1, column 7: could not determine"),
        (
            "name: !!python/object/apply:os.system [id]",
            "invalid YAML at line 1, column 7: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
        ("version: " + "9" * 5000, "invalid YAML at line 1, column 10: Exceeds the limit"),
        ("version: 2024-13-01", "invalid YAML at line 1, column 10: month must be in 1..12"),
        ("name: a\n\nstate: \x00", "invalid YAML at line 3, column 8: character U+0000"),
    ],
)
@pytest.mark.slow
def test_yaml_that_is_refused_or_invalid(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProblemError) as error:
        read_yaml(path)
    assert str(error.value).startswith(f"{path}: {expected}")


def test_anchors_and_aliases_within_the_limits_are_fine(tmp_path: Path) -> None:
    data = read_yaml(
        yaml_file(
            tmp_path,
            """
            env: &env {MODE: strict}
            checkpoints:
              checkpoint_1: {env: *env}
              checkpoint_2: {env: {<<: *env, LEVEL: "2"}}
            """,
        )
    )
    first, second = (data["checkpoints"][name]["env"] for name in ("checkpoint_1", "checkpoint_2"))
    assert (first, second) == ({"MODE": "strict"}, {"MODE": "strict", "LEVEL": "2"})


def test_non_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ProblemError, match=r"config\.yaml: not UTF-8 text \(byte 9\)$"):
        read_yaml(path)


def test_the_line_of_each_key_and_item(tmp_path: Path) -> None:
    data, lines = read_yaml_lines(
        yaml_file(tmp_path, "name: demo\ncheckpoints:\n  a: {}\n  b:\n    env: [x, y]\n")
    )
    assert lines.of(data, "checkpoints") == 2
    assert lines.of(data["checkpoints"], "b") == 4
    assert lines.of(data["checkpoints"]["b"]["env"], 1) == 5
    assert lines.of(data["checkpoints"], "missing") == 3  # a key it lacks: the mapping's own
