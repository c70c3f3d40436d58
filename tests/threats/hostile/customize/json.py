"""Shadows the standard library's json: harmless in the submission's own process, fatal in the
test runner's (which must never import it)."""

import os
import sys

if "pytest" in sys.modules or "_pytest" in sys.modules:
    raise SystemExit("the submission's json.py reached the test runner")

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]
del sys.modules["json"]
import json as _json  # noqa: E402  the standard library's

sys.modules["json"] = _json
globals().update(_json.__dict__)
