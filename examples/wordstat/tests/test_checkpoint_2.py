"""Checkpoint 2: several files, standard input and --top N."""

import json

import pytest
import yaml

SENTENCE = "The cat and the hat. THE end, cat!\n"


def output(result):
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_several_files(run_wordstat, write_text):
    first = write_text("first.txt", "alpha beta\ngamma\n")
    second = write_text("second.txt", "delta")
    assert output(run_wordstat(first, second)) == {
        "lines": 3,
        "words": 4,
        "chars": 22,
        "files": [
            {"path": str(first), "lines": 2, "words": 3, "chars": 17},
            {"path": str(second), "lines": 1, "words": 1, "chars": 5},
        ],
    }


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, [["the", 3]]),
        (2, [["the", 3], ["cat", 2]]),
        (5, [["the", 3], ["cat", 2], ["and", 1], ["end", 1], ["hat", 1]]),
    ],
    ids=["top1", "top2", "top5"],
)
def test_top_words(run_wordstat, write_text, n, expected):
    data = output(run_wordstat("--top", n, write_text("cat.txt", SENTENCE)))
    assert data["top"] == expected
    assert data["words"] == 8


def test_top_fewer_words_than_n(run_wordstat, write_text):
    data = output(run_wordstat("--top", "10", write_text("few.txt", "b a b\n")))
    assert data["top"] == [["b", 2], ["a", 1]]


def test_top_counts_all_files(run_wordstat, write_text):
    first = write_text("one.txt", "red green\n")
    second = write_text("two.txt", "green, blue. GREEN red\n")
    data = output(run_wordstat("--top", "2", first, second))
    assert data["top"] == [["green", 3], ["red", 2]]


def test_top_corpus_asset(run_wordstat, corpus_dir):
    expected = yaml.safe_load((corpus_dir / "expected.yaml").read_text(encoding="utf-8"))["top4"]
    data = output(run_wordstat("--top", "4", *(corpus_dir / name for name in expected["files"])))
    assert data["top"] == expected["top"]


@pytest.mark.functionality
def test_dash_reads_stdin(run_wordstat, write_text):
    path = write_text("file.txt", "on disk\n")
    data = output(run_wordstat(path, "-", stdin="from the pipe\n"))
    assert (data["lines"], data["words"], data["chars"]) == (2, 5, 22)
    assert [entry["path"] for entry in data["files"]] == [str(path), "-"]


@pytest.mark.unicode
def test_top_lowercases_unicode(run_wordstat, write_text):
    path = write_text("mixed.txt", "Ünïcode ÜNÏCODE «straße» Straße STRASSE\n")
    data = output(run_wordstat("--top", "3", path))
    assert data["top"] == [["straße", 2], ["ünïcode", 2], ["strasse", 1]]


@pytest.fixture
def frequency_table(corpus_dir):
    """Deliberately broken: the corpus ships no frequencies.csv, so this fixture fails in setup
    and the test using it is reported with outcome `error` (an example of a broken fixture)."""
    rows = (corpus_dir / "frequencies.csv").read_text(encoding="utf-8").splitlines()
    return {word: int(number) for word, number in (row.split(",") for row in rows)}


@pytest.mark.functionality
def test_top_matches_frequency_table(run_wordstat, corpus_dir, frequency_table):
    data = output(run_wordstat("--top", "3", corpus_dir / "fox.txt"))
    assert {word: number for word, number in data["top"]} == frequency_table


@pytest.mark.regression
def test_words_still_count_raw_tokens(run_wordstat, write_text):
    """Once `words` counted only the tokens that survive --top's normalisation."""
    data = output(run_wordstat("--top", "2", write_text("dash.txt", "Hello, hello! --\n")))
    assert data["words"] == 3
    assert data["top"] == [["hello", 2]]


@pytest.mark.error
def test_one_missing_file_fails_the_run(run_wordstat, write_text, tmp_path):
    result = run_wordstat(write_text("ok.txt", "fine\n"), tmp_path / "missing.txt")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("wordstat: ")


@pytest.mark.error
@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_top_needs_a_positive_integer(run_wordstat, write_text, value):
    result = run_wordstat(f"--top={value}", write_text("ok.txt", "fine\n"))
    assert result.returncode == 2
    assert result.stdout == ""
