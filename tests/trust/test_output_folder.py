"""What `file_digests` signs in a job folder: its files and those of one level of sub-folders
(SCBench's `evaluation/`), never through a link, never deeper."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from scbench_ci.trust.output_folder import file_digests


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "out" / "demo" / "checkpoint_1"
    (job / "evaluation").mkdir(parents=True)
    (job / "result.json").write_text("{}")
    (job / "evaluation" / "report.json").write_text("[]")
    return job


def test_a_job_folder_s_files_and_its_evaluation_folder_are_digested(tmp_path: Path) -> None:
    _job(tmp_path)
    digests = file_digests(tmp_path / "out", "demo/checkpoint_1", 32)
    assert digests == {
        "evaluation/report.json": hashlib.sha256(b"[]").hexdigest(),
        "result.json": hashlib.sha256(b"{}").hexdigest(),
    }


def test_a_link_or_a_deeper_folder_is_no_signed_folder(tmp_path: Path) -> None:
    job = _job(tmp_path)
    os.symlink("/etc/passwd", job / "evaluation" / "stdout.txt")
    assert file_digests(tmp_path / "out", "demo/checkpoint_1", 32) == (
        "stdout.txt is not a regular file"
    )
    (job / "evaluation" / "stdout.txt").unlink()
    (job / "evaluation" / "deeper").mkdir()
    assert file_digests(tmp_path / "out", "demo/checkpoint_1", 32) == (
        "evaluation/deeper is not a regular file"
    )


def test_the_limit_counts_the_sub_folder_s_files(tmp_path: Path) -> None:
    _job(tmp_path)
    assert file_digests(tmp_path / "out", "demo/checkpoint_1", 1) == (
        "it holds more than 1 entries"
    )
