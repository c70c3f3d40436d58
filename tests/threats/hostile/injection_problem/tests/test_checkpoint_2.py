"""A module that runs the submission as it is imported and fails with its output: the
collection error is the submission's text."""

import os
import shlex
import subprocess

argv = shlex.split(os.environ["INJECTION_ENTRYPOINT"])
raise RuntimeError(subprocess.run(argv, capture_output=True, timeout=60).stdout.decode())
