"""The broken wordstat (wordstat_base), hunting for secrets.

Every run searches its own environment, the environment and command line of every process it can
read in /proc, every file under its HOME and the credential files (`.git/config`,
`.git-credentials`, `.netrc`, `.env`, `.npmrc`, `.pypirc`) anywhere under its working directory.
At exit it appends its report to stderr, which the checkpoint_2 tests put in their failure
messages (`assert result.returncode == 0, result.stderr`), so the report lands in pytest.log, both
reports, results.json and the summary.

What it reports, one line per finding:
- every value that matches PLANTED, the prefix the tests give their made-up secrets, wherever it
  is, saying whether it was in the run (this process, its HOME and working directory, and the
  processes whose environment has SCBENCH_CHECKPOINT, which scbench-ci gives the test process)
  or outside it;
- every variable of the run whose name looks like a secret (SECRET_NAME), with its value.
Nothing else it reads is printed: on a shared machine the run's neighbours keep their real
credentials to themselves.
"""

import atexit
import os
import re
import sys
from pathlib import Path

from wordstat_base import main

MARKER = "HOSTILE-SECRETS-REPORT"
PLANTED = re.compile(r"scbench-planted-[\w-]+")
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|CREDENTIAL|KEY|^ACTIONS_|^GITHUB_|^AWS_|^INPUT_")
RUN_VARIABLE = "SCBENCH_CHECKPOINT"
CREDENTIAL_FILES = {".git-credentials", ".netrc", ".env", ".npmrc", ".pypirc"}
MAX_FILES = 5000
MAX_FILE_BYTES = 1 << 20


def hunt():
    """(how many places of each kind were read, {finding: [where]})."""
    found = {}
    searched = dict.fromkeys(("environments", "command lines", "files"), 0)

    def read(kind, where, text, in_run):
        searched[kind] += 1
        scope = "in the run" if in_run else "outside the run"
        for value in PLANTED.findall(text):
            found.setdefault(f"{value} {scope}", []).append(where)

    def read_environment(where, environment):
        in_run = RUN_VARIABLE in environment
        text = "\n".join(f"{name}={value}" for name, value in environment.items())
        read("environments", where, text, in_run)
        for name, value in environment.items():
            if in_run and SECRET_NAME.search(name):
                found.setdefault(f"{name}={value} in the run", []).append(where)
        return in_run

    read_environment("own environment", dict(os.environ))
    run_pids = set()
    for path in Path("/proc").glob("[0-9]*/environ"):
        environment = _proc_environment(path)
        if environment is not None and read_environment(str(path), environment):
            run_pids.add(path.parent.name)
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        text = _read(path)
        if text is not None:
            read("command lines", str(path), text, path.parent.name in run_pids)
    home_files = list(_files(Path.home()))
    credential_files = [path for path in _files(Path.cwd()) if _credential_file(path)]
    for path in home_files + credential_files:
        text = _read(path)
        if text is not None:
            read("files", str(path), text, in_run=True)
    return searched, found


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES).replace(b"\0", b"\n").decode(errors="replace")
    except OSError:
        return None


def _proc_environment(path):
    text = _read(path)
    if text is None:
        return None
    return dict(entry.partition("=")[::2] for entry in text.split("\n") if "=" in entry)


def _files(root):
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                yield path
                count += 1
                if count >= MAX_FILES:
                    return


def _credential_file(path):
    return path.name in CREDENTIAL_FILES or path.parts[-2:] == (".git", "config")


def report():
    searched, found = hunt()
    lines = [f"{MARKER} searched " + ", ".join(f"{n} {kind}" for kind, n in searched.items())]
    lines += [f"{MARKER} found {finding}: {', '.join(where)}" for finding, where in found.items()]
    print("\n".join(lines), file=sys.stderr)


if __name__ == "__main__":
    # At exit, so the report also follows argparse's usage errors, after what the tests expect.
    atexit.register(report)
    sys.exit(main())
