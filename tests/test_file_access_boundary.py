"""Package code opens, reads, walks or copies a path only through the guarded tree reader
(`scbench_ci/trust/untrusted_tree.py`), or in a place this allow-list names with its reason.

A new reader of a submission, a problem or a folder of reports belongs on the guard; a read of
the evaluator's own files (its output, its package data, /proc) belongs here, one line each.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.paths import REPO_ROOT

pytestmark = pytest.mark.slow

PACKAGE = REPO_ROOT / "scbench_ci"
GUARD = "scbench_ci.trust.untrusted_tree"

MODULE_CALLS = {
    "os": {"open", "walk", "fwalk", "scandir", "listdir"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "copyfileobj", "unpack_archive"},
    "tarfile": {"open", "TarFile"},
    "zipfile": {"ZipFile"},
}
"""Calls of these modules (`os.open(...)`), shown as `os.open`."""
METHODS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "iterdir",
    "glob",
    "rglob",
    "extract",
    "extractall",
    "extractfile",
}
"""Methods of any object (`path.read_bytes()`), shown as `.read_bytes`: pathlib's, tarfile's and
zipfile's."""

# (module, call) -> why it may open, read, walk or copy a path without the guard.
ALLOWED: dict[tuple[str, str], str] = {
    ("scbench_ci.trust.output_folder", "os.open"): "the one writer of output folders, the guard of "
    "what sits there: every name opened from the root's descriptor with O_NOFOLLOW",
    ("scbench_ci.trust.output_folder", "os.listdir"): "a folder it replaces, opened by descriptor",
    ("scbench_ci.trust.reuse", "os.open"): "the reuse key in the user's cache folder (O_EXCL, "
    "O_NOFOLLOW) and a signed job folder's files through output_folder's descriptors",
    (
        "scbench_ci.standalone.pytest_runner",
        "os.open",
    ): "write_new and read_regular: the evaluator's own "
    "files, created O_EXCL|O_NOFOLLOW and read O_NOFOLLOW from a folder descriptor",
    ("scbench_ci.standalone.pytest_runner", "open"): "/proc/<pid>/stat: the one reader of the "
    "process table, the runner's, the subreaper's and the host's (executors.processes)",
    ("scbench_ci.standalone.pytest_runner", "os.scandir"): "/proc, to find every process",
    ("scbench_ci.standalone.pytest_runner", "os.listdir"): "/dev/fd: the runner's own open "
    "descriptors, those of its output watch's pipe",
    ("scbench_ci.executors.docker.image_recipe", ".read_bytes"): "the evaluation image's "
    "Dockerfile, a resource of the installed package",
    ("scbench_ci.executors.docker.image_build", "tarfile.open"): "the build context made in "
    "memory from that Dockerfile (fileobj, no path)",
    ("scbench_ci.executors.processes", ".read_text"): "/proc/stat (the boot time)",
    (
        "scbench_ci.executors.processes",
        ".read_bytes",
    ): "/proc/<pid>/environ, to find a run's processes",
    ("scbench_ci.trust.seal", "os.open"): "the reports folder the evaluator made, O_NOFOLLOW",
    ("scbench_ci.trust.seal", ".open"): "the run's log, written by the evaluator itself",
    ("scbench_ci.trust.seal", ".read_bytes"): "the run's log, written by the evaluator itself",
    ("scbench_ci.job.fingerprint", "os.listdir"): "the evaluator's staged workspace (its own copy)",
    ("scbench_ci.job.fingerprint", "os.open"): "the evaluator's staged workspace, O_NOFOLLOW",
    (
        "scbench_ci.pipeline.job_evaluation",
        ".read_bytes",
    ): "the run's logs, written by the evaluator itself",
    (
        "scbench_ci.pipeline.job_evaluation",
        "shutil.copytree",
    ): "a shard's copy of the staged workspace, "
    "which the evaluator made through the guard (links inside it kept as links, never followed) "
    "before any of the submission's code ran",
    ("scbench_ci.executors.shipped", ".read_bytes"): "the run's logs, written by the evaluator "
    "on the node",
    ("scbench_ci.executors.shipped", "tarfile.open"): "the workspace archive `ship` packed "
    "through the guarded reader, in memory",
    ("scbench_ci.executors.shipped", ".extractall"): "that archive, into a scratch folder of "
    "the node's own",
    ("scbench_ci.executors.output", ".open"): "the run's log file the evaluator writes",
    ("scbench_ci.executors.docker.transfer", "os.scandir"): "the top of the staged workspace; each "
    "entry is packed by archive.add_tree through the guard",
    (
        "scbench_ci.executors.docker.transfer",
        ".read_bytes",
    ): "pytest_runner.py of the package itself",
    (
        "scbench_ci.executors.docker.cache_build",
        ".write_bytes",
    ): "a scratch folder of the evaluator's own",
    (
        "scbench_ci.executors.docker.cache_build",
        "shutil.copystat",
    ): "metadata only, of the staged workspace",
    ("scbench_ci.executors.docker.cache", ".read_bytes"): "the staged workspace's "
    "requirements.txt (the evaluator's own copy, made through the guard)",
    ("scbench_ci.executors.archive", "tarfile.open"): "tar streams in memory, never a path",
    (
        "scbench_ci.executors.archive",
        ".extractfile",
    ): "the one report of a tar stream, into memory",
    (
        "scbench_ci.problem.yaml_loader",
        ".open",
    ): "config.yaml (problem.load checks it lies inside the problem; a "
    "link within it is supported) and an environment file the user names: regular, capped at "
    "MAX_CONFIG_BYTES",
    ("scbench_ci.results.schema", ".read_text"): "the package's own JSON schema",
    ("scbench_ci.results.log_tail", ".open"): "the end of the run's log, written by the evaluator "
    "itself",
    ("scbench_ci.results.baseline", ".iterdir"): "finds results.json files below a folder the user "
    "names, two levels at most",
    ("scbench_ci.job.plan", ".iterdir"): "lists the problem folders of a folder the user names",
    ("scbench_ci.outputs.github.workflow", ".open"): "GitHub's step summary and output files",
    ("scbench_ci.outputs.github.event", ".read_text"): "GitHub's event file",
    ("scbench_ci.engines.load", ".read_text"): "the kernel's /proc/stat and /proc/meminfo",
    (
        "scbench_ci.action.artifact_download",
        "zipfile.ZipFile",
    ): "a downloaded artifact, its "
    "members checked one by one (_checked_path) and extracted with open('xb')",
    (
        "scbench_ci.action.artifact_download",
        ".open",
    ): "the artifact's members, written 'xb'",
    (
        "scbench_ci.outputs.github.artifacts",
        "zipfile.ZipFile",
    ): "writes the artifact being uploaded",
    (
        "scbench_ci.outputs.github.artifacts",
        "os.walk",
    ): "the output folder being uploaded; links are neither entered nor packed",
    ("scbench_ci.action.inputs", "os.walk"): "the output folder, to check it before upload",
}


def _calls(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "open":
            yield node.lineno, "open"
        elif isinstance(function, ast.Attribute):
            receiver = function.value
            module = receiver.id if isinstance(receiver, ast.Name) else None
            if module in MODULE_CALLS:
                if function.attr in MODULE_CALLS[module] or (
                    module == "shutil" and function.attr.startswith("copy")
                ):
                    yield node.lineno, f"{module}.{function.attr}"
            elif function.attr in METHODS:
                yield node.lineno, f".{function.attr}"


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)


def _found() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        if module == GUARD:
            continue
        for line, call in _calls(ast.parse(path.read_text(), filename=str(path))):
            found.setdefault((module, call), []).append(line)
    return found


def test_package_code_reads_paths_only_through_the_guard_or_the_allow_list() -> None:
    found = _found()
    refused = [
        f"{module.replace('.', '/')}.py:{line}: {call}(...) opens, reads, walks or copies a "
        f"path outside {GUARD}"
        for (module, call), lines in sorted(found.items())
        if (module, call) not in ALLOWED
        for line in lines
    ]
    assert not refused, (
        "\n".join(refused) + "\nRead untrusted trees and files through "
        f"{GUARD} (UntrustedTree.opened, read_file, walk, copy_tree). Only for the "
        "evaluator's own files, add an entry to ALLOWED in tests/test_file_access_boundary.py: "
        '("<module>", "<call>"): "<why it is not an untrusted tree>",'
    )


def test_every_allow_list_entry_is_still_used() -> None:
    unused = sorted(set(ALLOWED) - set(_found()))
    assert not unused, f"entries of ALLOWED no code needs any more (remove them): {unused}"


def test_the_check_sees_each_kind_of_call() -> None:
    code = (
        "open(p)\nos.open(p, 0)\np.read_text()\np.write_bytes(b'')\nos.walk(p)\n"
        "os.scandir(p)\nos.listdir(p)\np.iterdir()\np.glob('*')\np.rglob('*')\n"
        "shutil.copy2(a, b)\nshutil.copytree(a, b)\ntar.extractall(p)\nzipfile.ZipFile(p)\n"
        "ast.walk(tree)\n{}.copy()\n"
    )
    assert [call for _, call in _calls(ast.parse(code))] == [
        "open",
        "os.open",
        ".read_text",
        ".write_bytes",
        "os.walk",
        "os.scandir",
        "os.listdir",
        ".iterdir",
        ".glob",
        ".rglob",
        "shutil.copy2",
        "shutil.copytree",
        ".extractall",
        "zipfile.ZipFile",
    ]
