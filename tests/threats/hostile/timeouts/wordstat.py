"""Never answers: ignores SIGTERM, leaves a detached sleeper behind, then spins forever."""

import os
import signal
import subprocess
import sys

TAG = os.environ.get("HOSTILE_TAG", "scbench-hostile-sleeper")

signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(3600)", TAG],
    start_new_session=True,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
while True:
    pass
