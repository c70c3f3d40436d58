"""The pull request a run was made for, as the action writes it beside results.json when its
event is a pull request: what a `workflow_run` workflow needs to publish the run to it.

The file travels in an artifact that the pull request's own workflow uploaded, so whoever ran
that workflow wrote it: it is read back only through the strict reader (`results/file.py`,
`load_pull_request`) and then checked against the `workflow_run` event (SECURITY.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scbench_ci.trust.strict_json import JsonError, join

PULL_REQUEST_FILE = "pull_request.json"
MAX_NUMBER = 2**31 - 1
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A commit's SHA-1, or SHA-256 where a repository uses it."""
_FIELDS = ("number", "head_sha")


@dataclass(frozen=True)
class PullRequestRef:
    number: int
    head_sha: str


def pull_request_to_json(reference: PullRequestRef) -> dict[str, Any]:
    return {"number": reference.number, "head_sha": reference.head_sha}


def pull_request_from_json(document: Any) -> PullRequestRef:
    """A JsonError naming the field for anything but an object of exactly `number` (a pull
    request's number) and `head_sha` (a commit's full lower-case SHA)."""
    if not isinstance(document, dict):
        raise JsonError("", "not a JSON object")
    for name in document:
        if name not in _FIELDS:
            raise JsonError(join("", name), "not a field of this file")
    number, head_sha = document.get("number"), document.get("head_sha")
    if type(number) is not int or not 1 <= number <= MAX_NUMBER:
        raise JsonError("number", f"not a pull request's number (1 to {MAX_NUMBER})")
    if not isinstance(head_sha, str) or not _SHA.fullmatch(head_sha):
        raise JsonError("head_sha", "not a commit's full SHA in lower-case hexadecimal")
    return PullRequestRef(number, head_sha)
