"""A Check Run of the job (`check_run: true`), through GitHub's REST checks API.

One check run per job, created completed on the commit the run checked: its conclusion from the
exit code (neutral for a result this repository did not make: `command: publish`), its title the
summary's headline, its text the summary, and every annotation of the run
(`annotations.py` decides what they are), where a step's workflow commands stop at 10 errors and
10 warnings. GitHub takes at most 50 annotations a request: the first 50 go with the creation
(POST /repos/{owner}/{repo}/check-runs), each further 50 with an update of it (PATCH
.../check-runs/{id}), which appends them. The summary and the text are held to the API's 65,535
characters, cut at a line with a line saying so. The title, summary and text are markdown: each is
escaped (trust/markdown.py) unless it is Markdown. Every failure is a warning: a token without
`checks: write` (a pull request from a fork gets a read-only one) leaves the step's own
annotations as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal

from scbench_ci.outputs.github.annotations import Annotation
from scbench_ci.outputs.github.rest import DEFAULT_RETRY, GitHubApiError, GitHubError, GitHubRest
from scbench_ci.outputs.github.retry import RetryPolicy
from scbench_ci.trust.markdown import cut, markdown
from scbench_ci.trust.terminal import terminal_text

OUTPUT_LIMIT = 65_535
"""GitHub's longest `output.summary` and `output.text`, in characters."""
ANNOTATIONS_PER_REQUEST = 50
"""GitHub's most annotations in one request."""
MAX_TITLE_CHARS = 255
"""GitHub's longest annotation title."""
NO_FILE = "/"
"""The path of an annotation about no file (a checkpoint that did not run): the API needs one."""
_LEVELS = {"error": "failure", "warning": "warning"}
Conclusion = Literal["success", "failure", "neutral"]


@dataclass(frozen=True)
class CheckRun:
    """What the check run shows."""

    name: str
    head_sha: str
    conclusion: Conclusion
    """`success` or `failure` by the step's exit code; `neutral` for a result that is only a
    claim (another workflow's artifact), whatever it says."""
    title: str
    summary: str
    text: str
    """The title, summary and text: Markdown is shown as it is, any other str escaped as a line
    of text."""
    annotations: Iterable[Annotation]


@dataclass(frozen=True)
class CheckRunResult:
    url: str | None
    warning: str | None
    annotations: int
    """How many annotations GitHub took."""


def publish_check_run(
    check: CheckRun,
    env: Mapping[str, str],
    token: str,
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> CheckRunResult:
    """Create the check run, then add its annotations beyond the first batch."""
    if not token:
        return CheckRunResult(None, "there is no GitHub token to create it with", 0)
    batches = _batches(check.annotations)
    output = {
        "title": markdown(check.title),
        "summary": cut(markdown(check.summary), OUTPUT_LIMIT),
        "text": cut(markdown(check.text), OUTPUT_LIMIT),
    }
    url, taken = None, 0
    try:
        with GitHubRest.from_env(env, token, retry=retry) as api:
            first = next(batches, [])
            created = api.post(
                api.repo_path("/check-runs"),
                {
                    "name": check.name,
                    "head_sha": check.head_sha,
                    "status": "completed",
                    "conclusion": check.conclusion,
                    "output": {**output, "annotations": first},
                },
            )
            check_id, url = _created(created)
            taken = len(first)
            for batch in batches:
                path = api.repo_path(f"/check-runs/{check_id}")
                api.patch(path, {"output": {**output, "annotations": batch}})
                taken += len(batch)
    except GitHubError as error:
        return CheckRunResult(url, _warning(error, url, taken), taken)
    return CheckRunResult(url, None, taken)


def annotation_json(annotation: Annotation) -> dict[str, Any]:
    """An annotation as the checks API takes it, shown as text: each character that is not
    printable (but a newline in the message) as its Python escape, as a workflow command has
    it."""
    line = annotation.line or 1
    return {
        "path": terminal_text(annotation.file, kept="") if annotation.file else NO_FILE,
        "start_line": line,
        "end_line": line,
        "annotation_level": _LEVELS[annotation.level],
        "message": terminal_text(annotation.message or annotation.title, kept="\n"),
        "title": terminal_text(annotation.title, kept="")[:MAX_TITLE_CHARS],
    }


def _batches(annotations: Iterable[Annotation]) -> Iterator[list[dict[str, Any]]]:
    found = iter(annotations)
    while batch := [annotation_json(a) for a in islice(found, ANNOTATIONS_PER_REQUEST)]:
        yield batch


def _created(answer: object) -> tuple[int, str | None]:
    check_id = answer.get("id") if isinstance(answer, dict) else None
    if not isinstance(check_id, int) or isinstance(check_id, bool):
        raise GitHubError("POST /check-runs did not answer a check run")
    url = answer.get("html_url") if isinstance(answer, dict) else None
    return check_id, url if isinstance(url, str) else None


def _warning(error: GitHubError, url: str | None, taken: int) -> str:
    if url is not None:
        return f"the Check Run {url} has only its first {taken} annotations: {error}"
    if isinstance(error, GitHubApiError) and error.status == 403 and not error.rate_limited:
        return (
            "the token may not create check runs (the job needs `permissions: checks: write`; "
            f"a pull request from a fork gets a read-only token): {error}"
        )
    return str(error)
