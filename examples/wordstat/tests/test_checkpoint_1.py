"""Checkpoint 1: counting lines, words and characters of one file."""

import json

import pytest
import yaml


def counts(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_counts_simple_file(run_wordstat, write_text):
    path = write_text("simple.txt", "hello world\nsecond line here\n")
    assert counts(run_wordstat(path)) == {"lines": 2, "words": 5, "chars": 29}


# The ids deliberately spell marker names: ids are not markers, these cases stay Core.
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("  lots   of\t\tspace \n\n", {"lines": 2, "words": 3, "chars": 21}),
        ("", {"lines": 0, "words": 0, "chars": 0}),
        ("a b\nc", {"lines": 2, "words": 3, "chars": 5}),
    ],
    ids=["error", "functionality", "no-final-newline"],
)
def test_counts(run_wordstat, write_text, content, expected):
    path = write_text("case.txt", content)
    assert counts(run_wordstat(path)) == expected


def test_output_is_one_json_object(run_wordstat, write_text):
    result = run_wordstat(write_text("one.txt", "one two three\n"))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # fails if anything else is printed
    assert set(data) == {"lines", "words", "chars"}
    assert all(type(value) is int for value in data.values())


def test_corpus_asset(run_wordstat, corpus_dir):
    expected = yaml.safe_load((corpus_dir / "expected.yaml").read_text(encoding="utf-8"))
    for name, wanted in expected["counts"].items():
        assert counts(run_wordstat(corpus_dir / name)) == wanted, name


def test_several_files_depend_on_checkpoint(run_wordstat, write_text, checkpoint_name):
    """One FILE only in checkpoint 1; from checkpoint 2 on several files are summed."""
    first = write_text("first.txt", "a b\n")
    second = write_text("second.txt", "c\n")
    result = run_wordstat(first, second)
    if checkpoint_name == "checkpoint_1":
        assert result.returncode == 2
        assert result.stdout == ""
        # argparse's usage error: a missing program exits 2 too (found by `scbench-ci check`).
        assert result.stderr.startswith("usage: ")
    else:
        data = counts(result)
        assert (data["lines"], data["words"], data["chars"]) == (2, 3, 6)
        assert [entry["path"] for entry in data["files"]] == [str(first), str(second)]


# Functionality: an xfailed Core test would fail `core-cases`, as SCBench counts it not passed.
@pytest.mark.functionality
@pytest.mark.xfail(reason="hyphenated words are one word by the spec; splitting them is only "
                          "an idea for a later version", strict=False)
def test_hyphenated_words_split(run_wordstat, write_text):
    path = write_text("hyphen.txt", "a well-known fact\n")
    assert counts(run_wordstat(path))["words"] == 4


@pytest.mark.unicode
def test_chars_are_code_points(run_wordstat, write_text):
    path = write_text("accents.txt", "héllo wörld ✓\n")
    assert counts(run_wordstat(path)) == {"lines": 1, "words": 3, "chars": 14}


@pytest.mark.functionality
def test_crlf_is_kept_as_is(run_wordstat, write_text):
    path = write_text("dos.txt", "one\r\ntwo three\r\n")
    assert counts(run_wordstat(path)) == {"lines": 2, "words": 3, "chars": 16}


@pytest.mark.regression
def test_whitespace_only_file(run_wordstat, write_text):
    """Once reported as 1 word: a file of blanks has lines but no words."""
    path = write_text("blank.txt", " \t \n   \n")
    assert counts(run_wordstat(path)) == {"lines": 2, "words": 0, "chars": 8}


@pytest.mark.error
def test_missing_file(run_wordstat, tmp_path):
    result = run_wordstat(tmp_path / "does-not-exist.txt")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("wordstat: ")


@pytest.mark.error
def test_invalid_utf8(run_wordstat, write_text):
    result = run_wordstat(write_text("latin1.txt", "caf\xe9 au lait\n".encode("latin-1")))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("wordstat: ")


@pytest.mark.error
@pytest.mark.parametrize("args", [[], ["--no-such-option", "FILE"]], ids=["no-file", "unknown-option"])
def test_usage_errors(run_wordstat, write_text, args):
    path = write_text("ok.txt", "fine\n")
    result = run_wordstat(*[path if arg == "FILE" else arg for arg in args])
    assert result.returncode == 2
    assert result.stdout == ""
