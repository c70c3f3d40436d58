"""The value of a Python string literal as `repr` writes one, read out of untrusted text (a
test's message, pytest's report), never run.

Only the escapes `repr` writes are read. Python's parser warns of any other (`\\ `, `\\d`), and
from Python 3.12 on that warning is a SyntaxWarning printed on the terminal: text that `repr`
never wrote is no literal to read.
"""

from __future__ import annotations

import ast
import re

_STR_BODY = re.compile(r"""(?:[^\\]|\\(?:[\\'"nrt]|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}))*+""")
_BYTES_BODY = re.compile(r"""(?:[^\\]|\\(?:[\\'"nrt]|x[0-9a-f]{2}))*+""")


def literal_value(literal: str) -> str | bytes | None:
    """The value of a str or bytes literal (`'...'`, `b"..."`) whose escapes are those `repr`
    writes; None for any other text."""
    is_bytes = literal.startswith("b")
    if (_BYTES_BODY if is_bytes else _STR_BODY).fullmatch(literal[1 + is_bytes : -1]) is None:
        return None
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str | bytes) else None
