"""The fingerprint `--skip-existing` compares."""

from __future__ import annotations

from pathlib import Path

from scbench_ci.job.fingerprint import fingerprint


def test_the_fingerprint_covers_names_contents_modes_links_and_settings(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg/a.py").write_text("a = 1\n")
    (workspace / "run.sh").write_text("echo\n")
    (workspace / "link").symlink_to("pkg/a.py")
    settings = {"policy": "core-cases"}
    first = fingerprint(workspace, settings)
    assert fingerprint(workspace, settings) == first
    changes = [
        lambda: (workspace / "pkg/a.py").write_text("a = 2\n"),
        lambda: (workspace / "run.sh").chmod(0o755),
        lambda: ((workspace / "link").unlink(), (workspace / "link").symlink_to("run.sh")),
        lambda: (workspace / "pkg/b").mkdir(),
        lambda: (workspace / "pkg/a.py").rename(workspace / "pkg/c.py"),
    ]
    seen = {first}
    for change in changes:
        change()
        now = fingerprint(workspace, settings)
        assert now not in seen
        seen.add(now)
    assert fingerprint(workspace, {"policy": "any"}) not in seen
