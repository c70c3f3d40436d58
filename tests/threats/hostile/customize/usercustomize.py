"""Would mark every test passed, if the test runner's Python ever imported it."""

import builtins

builtins.__scbench_hostile__ = True
import pytest_forcepass  # noqa: E402,F401
