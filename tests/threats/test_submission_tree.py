"""A submission tree that nests 5,000 folders deep and holds links out of itself, evaluated in
Docker through the real CLI: the deep part and the links are left out with a warning, the
verdict is the tests' (no crash, no exit 3), and the token a link leads to appears nowhere."""

from __future__ import annotations

import json
from pathlib import Path

from scbench_ci.trust.files import remove_tree
from testing.problems import ProblemFolder
from testing.trees import (
    assert_no_crash,
    assert_no_secret,
    nest,
    plant_secret,
    scbench,
)

TEST = """
import subprocess


def test_says_hello(entrypoint_argv):
    out = subprocess.run(entrypoint_argv, capture_output=True, text=True).stdout
    assert out == "hello\\n"
"""


def test_a_deep_submission_with_links_out_is_evaluated_without_them(
    test_image: str, tmp_path: Path
) -> None:
    secret = plant_secret(tmp_path / "outside")
    problem = ProblemFolder(
        tmp_path / "demo",
        {"name": "demo", "entry_file": "main", "checkpoints": {"checkpoint_1": {}}},
    )
    problem.write("tests/test_checkpoint_1.py", TEST)
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "main.py").write_text("print('hello')\n")
    (submission / "token").symlink_to(secret)
    (submission / "climbs").symlink_to("../outside/environ")
    (submission / "deep").mkdir()
    nest(submission / "deep", 5000)
    output = tmp_path / "out"
    try:
        run = scbench(
            test_image,
            "evaluate",
            "--problem",
            problem.root,
            "--checkpoint",
            "checkpoint_1",
            "--submission",
            submission,
            "--entrypoint",
            "python main.py",
            "--output",
            output,
        )
    finally:
        remove_tree(submission / "deep")

    assert_no_crash(run)
    assert run.returncode == 0, run.stdout + run.stderr
    checkpoint = json.loads((output / "results.json").read_text())["problems"][0]["checkpoints"][0]
    assert (checkpoint["passed"], checkpoint["failure"]) == (True, None)
    assert [(t["id"], t["status"]) for t in checkpoint["tests"]] == [
        ("tests/test_checkpoint_1.py::test_says_hello", "passed")
    ]
    # SCBench 1.0's snapshot leaves every link out, those that leave the submission included.
    assert (
        "2 symlink(s) of the submission were left out, as SCBench's snapshot leaves out every "
        "link: climbs, token"
    ) in run.stdout + run.stderr
    deep = "deep/" + "/".join(["d"] * 99)
    assert (
        f"1 folder(s) of the submission lie deeper than 100 levels and were left out: {deep}"
        in run.stdout + run.stderr
    )
    assert_no_secret(run, output)
