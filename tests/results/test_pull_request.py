"""pull_request.json, written on a pull request and read back through the strict reader: exactly a
pull request's number and a full commit SHA, anything else refused naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from scbench_ci.results.file import ResultsError, load_pull_request, write_pull_request
from scbench_ci.results.pull_request import PULL_REQUEST_FILE, PullRequestRef

SHA = "0123456789abcdef" * 2 + "01234567"


def test_written_and_read_back(tmp_path: Path) -> None:
    path = write_pull_request(PullRequestRef(7, SHA), tmp_path)
    assert path == tmp_path / PULL_REQUEST_FILE
    assert load_pull_request(path) == PullRequestRef(7, SHA)


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ('{"number": 7}', "head_sha: not a commit's full SHA"),
        (f'{{"number": true, "head_sha": "{SHA}"}}', "number: not a pull request's number"),
        (f'{{"number": 0, "head_sha": "{SHA}"}}', "number: not a pull request's number"),
        (f'{{"number": 7.0, "head_sha": "{SHA}"}}', "number: not a pull request's number"),
        (f'{{"number": 7, "head_sha": "{SHA.upper()}"}}', "head_sha: not a commit's full SHA"),
        ('{"number": 7, "head_sha": "main"}', "head_sha: not a commit's full SHA"),
        # An unknown key is named escaped: a bidi character cannot turn the line around.
        ('{"number": 7, "ref\\u202e": 1}', '["ref\\u202e"]: not a field of this file'),
        ('{"head": 1}', "head: not a field of this file"),
        (f'{{"number": 7, "head_sha": "{SHA}", "x": 1}}', "3 items, more than the 2 allowed"),
        (f'{{"number": 7, "head_sha": "{SHA}", "number": 8}}', "given twice"),
        (f'[7, "{SHA}"]', "not a JSON object"),
        (" " * 5000, "is larger than 4096 bytes"),
    ],
)
def test_anything_else_is_refused_naming_the_field(tmp_path: Path, text: str, refusal: str) -> None:
    path = tmp_path / PULL_REQUEST_FILE
    path.write_text(text)
    with pytest.raises(ResultsError) as caught:
        load_pull_request(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert refusal in str(caught.value)


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    target = write_pull_request(PullRequestRef(7, SHA), tmp_path / "elsewhere")
    (tmp_path / PULL_REQUEST_FILE).symlink_to(target)
    with pytest.raises(ResultsError):
        load_pull_request(tmp_path / PULL_REQUEST_FILE)
