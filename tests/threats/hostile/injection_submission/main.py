"""A submission whose output is hostile text: markdown, HTML, workflow commands, escapes.

It prints OUTPUT and exits 1. With --kill-the-runner it first kills the pytest process that runs
it: its nearest ancestor given the problem's --entrypoint option.
"""

import os
import signal
import sys
from pathlib import Path

OUTPUT = (
    "</code></summary></details><script>alert('summary')</script>\n"
    "## All tests passed\n"
    "</details>\n"
    "<details open><summary>fake</summary>\n"
    "::error file=main.py,line=1::injected error\n"
    "::set-output name=passed::true\n"
    "::add-mask::FAILED\n"
    "::stop-commands::hostile-token\n"
    "   ::group::indented group\n"
    "\t::warning::after a tab\n"
    "plain\r::error::after a carriage return\n"
    "%0A::error::percent-encoded newline %25 %3A\n"
    "text ##[error]a v1 command\n"
    "\u2028::error::after a line separator\n"
    "\u00a0::error::after a no-break space\n"
    "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x1b\\an OSC 8 link\x1b]8;;\x1b\\\x1b[2K\n"
    "[a link](javascript:alert(1)) <img src=x onerror=alert(1)> https://evil.example\n"
    "| a | table |\n"
    "```\n"
    "::error::the last line\n"
)


def pytest_pid():
    pid = os.getppid()
    while pid > 1:
        if b"--entrypoint=" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return None


if __name__ == "__main__":
    sys.stdout.write(OUTPUT)
    sys.stdout.flush()
    if "--kill-the-runner" in sys.argv and (pid := pytest_pid()) is not None:
        os.kill(pid, signal.SIGKILL)
    sys.exit(1)
