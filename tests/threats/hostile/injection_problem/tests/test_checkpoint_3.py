"""A test that shows the submission's output as it runs (as a problem showing a server's log
would), with a submission that kills pytest: the end of the log, with no report, is the
submission's text."""

import subprocess


def test_streams_the_submission(entrypoint_argv, capfd):
    with capfd.disabled():
        subprocess.run([*entrypoint_argv, "--kill-the-runner"], timeout=60)
