"""Checkpoint 3: --format json|yaml|text and --stopwords. Runs without the earlier tests."""

import json

import pytest
import yaml

POEM = "Rain on the roof, rain on the road.\nThe road is wet\n"


@pytest.fixture
def poem(write_text):
    return write_text("poem.txt", POEM)


@pytest.fixture
def notes(write_text):
    return write_text("notes.txt", "wet roof\n")


def ok(result):
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_default_format_is_json(run_wordstat, poem):
    default = json.loads(ok(run_wordstat("--top", "2", poem)))
    explicit = json.loads(ok(run_wordstat("--format", "json", "--top", "2", poem)))
    assert default == explicit == {
        "lines": 2, "words": 12, "chars": 52, "top": [["the", 3], ["on", 2]],
    }


@pytest.mark.parametrize(
    "args",
    [["POEM"], ["--top", "3", "POEM"], ["--top", "2", "POEM", "NOTES"]],
    ids=["plain", "top", "several-files"],
)
def test_yaml_matches_json(run_wordstat, poem, notes, args):
    args = [{"POEM": poem, "NOTES": notes}.get(arg, arg) for arg in args]
    as_json = json.loads(ok(run_wordstat(*args)))
    as_yaml = yaml.safe_load(ok(run_wordstat("--format", "yaml", *args)))
    assert as_yaml == as_json


def test_text_one_file(run_wordstat, poem):
    assert ok(run_wordstat("--format", "text", poem)).splitlines() == [f"2 12 52 {poem}"]


def test_text_several_files_with_top(run_wordstat, poem, notes):
    lines = ok(run_wordstat("--format", "text", "--top", "2", poem, notes)).splitlines()
    assert lines == [
        f"2 12 52 {poem}",
        f"1 2 9 {notes}",
        "3 14 61 total",
        "3 the",
        "2 on",
    ]


def test_stopwords_leave_the_top_list(run_wordstat, write_text, poem):
    stop = write_text("stop.txt", "the\non\n")
    data = json.loads(ok(run_wordstat("--top", "3", "--stopwords", stop, poem)))
    assert data["top"] == [["rain", 2], ["road", 2], ["is", 1]]
    assert data["words"] == 12


@pytest.mark.functionality
def test_stopwords_file_comments_and_case(run_wordstat, write_text, poem):
    stop = write_text("stop.txt", "# articles and such\n\nTHE\n  On,  \n#rain\n")
    data = json.loads(ok(run_wordstat("--top", "2", "--stopwords", stop, poem)))
    assert data["top"] == [["rain", 2], ["road", 2]]


@pytest.mark.unicode
def test_yaml_keeps_words_as_strings(run_wordstat, write_text):
    path = write_text("tricky.txt", "yes no null 123 3.5 ~ café: true #tag\n")
    data = yaml.safe_load(ok(run_wordstat("--format", "yaml", "--top", "10", path)))
    assert sorted(word for word, _ in data["top"]) == sorted(
        ["yes", "no", "null", "123", "3.5", "café", "true", "tag"]
    )


@pytest.mark.regression
def test_counts_unchanged_from_checkpoint_1(run_wordstat, write_text):
    """The checkpoint 1 tests are not run here; this keeps their basic case."""
    path = write_text("simple.txt", "hello world\nsecond line here\n")
    assert json.loads(ok(run_wordstat(path))) == {"lines": 2, "words": 5, "chars": 29}


@pytest.mark.error
def test_unknown_format(run_wordstat, poem):
    result = run_wordstat("--format", "xml", poem)
    assert result.returncode == 2
    assert result.stdout == ""


@pytest.mark.error
def test_missing_stopwords_file(run_wordstat, poem, tmp_path):
    result = run_wordstat("--top", "2", "--stopwords", tmp_path / "nope.txt", poem)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("wordstat: ")
