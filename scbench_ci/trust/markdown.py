"""Text for GitHub's markdown, the one escaper of that kind of output: the job summary, `merge`'s
summary, the pull request comment and the Check Run's title, summary and text.

As markupsafe's `Markup` is for HTML, `Markdown` is markdown that scbench-ci itself wrote: only
the functions of this module make one, each from our own words (`literal`, `formatted`'s
template) or from text it escapes. Every other value is text, from wherever it came (a test's
message, a problem's or a checkpoint's name, an error that quotes a results.json), and is escaped
where it is put: `markdown(value)` is the value itself when it is Markdown, else the value
escaped. The templates' environment applies it to every `{{ }}`
(outputs/markdown_templates.py), and the Check Run and the comment to what they are given, so
neither a template nor a message builder can put a plain string into the page unescaped.

What escaped text cannot start: a link (`[x](y)`, `www.`, `scheme://`), an image, a heading, a
list, emphasis, a code span or fence, a table cell (`|`), an HTML tag or comment (`<`), an entity
(`&`), a mention (`@name`, given a zero-width space), nor a line of its own. Characters that are
not printable (controls, bidi overrides, line separators) are shown as their Python escapes, so
the page cannot be reordered or hide text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any, LiteralString, overload
from urllib.parse import quote, urlsplit

import jinja2

from scbench_ci.trust.terminal import terminal_text


class Markdown(str):
    """Markdown scbench-ci wrote, safe to put into a page as it is; any other str is text.

    Made only by this module's functions: a str method on it (`+`, `replace`, slicing) gives a
    plain str again, which is escaped where it is put."""

    __slots__ = ()


# A run of white space that holds a line break, whole. It starts only where white space does: the
# expression alone would try again at each character of a long run without one (quadratic time).
_LINE_BREAKS = re.compile(r"(?<!\s)\s*[\r\n]\s*")
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]#~|])")
# Where a backslash keeps text from starting a list (`- `, `+ `, `1. `, `1) `) or underlining the
# line before it as a heading (`===`, `---`): before the `-`, `+` or `=`, after the digits.
_BLOCK_START = re.compile(r"^(\s*)(\d{1,9}(?=[.)](?:\s|$))|(?=[-+=]))")
_BACKTICKS = re.compile(r"`+")
# Where GFM makes a link of plain text: `scheme://` and `www.` (an e-mail address still becomes
# a mailto: link, which no escape prevents).
_AUTOLINK = re.compile(r"(?i)(?<=www)\.|:(?=//)")
# In a pull request comment `@name` notifies that user and `@org/team` a team: a zero-width space
# after the `@` keeps the text and notifies no one.
_MENTION = "@\u200b"
_KEPT_IN_LINE = "\t"
_KEPT_IN_BLOCK = "\n\t"


def markdown(value: object) -> Markdown:
    """`value` as it goes into a page: itself when it is Markdown, a number as Python writes
    it, else `text(value)`."""
    if isinstance(value, Markdown):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Markdown(value)
    return text(value)


def literal(words: LiteralString) -> Markdown:
    """Markdown written in scbench-ci's own source (a type checker that knows LiteralString
    refuses any other string)."""
    return Markdown(words)


def text(value: object, *, strip: bool = True) -> Markdown:
    """Plain text on one line of markdown (a table cell, a heading, a list item, a paragraph),
    shown as it is: line breaks become spaces; `strip`: without white space at either end."""
    if isinstance(value, Markdown):
        return value
    line = _LINE_BREAKS.sub(" ", str(value))
    line = _visible(line.strip() if strip else line, _KEPT_IN_LINE).replace("@", _MENTION)
    # Backslashes first: escaping after html.escape would break its `&#x27;`.
    line = _BLOCK_START.sub(r"\1\2\\", _MARKDOWN_SPECIALS.sub(r"\\\1", line), count=1)
    return Markdown(html.escape(_AUTOLINK.sub(r"\\\g<0>", line), quote=True))


def html_text(value: object) -> Markdown:
    """One line of text for inside HTML (a <summary>), where no markdown is parsed."""
    line = _visible(_LINE_BREAKS.sub(" ", str(value)).strip(), _KEPT_IN_LINE)
    return Markdown(html.escape(line.replace("@", _MENTION), quote=True))


def code_span(value: object) -> Markdown:
    """One line of text as inline code: its backticks cannot close it."""
    line = _visible(_LINE_BREAKS.sub(" ", str(value)), _KEPT_IN_LINE)
    longest = max((len(run) for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if line.startswith("`") or line.endswith("`") else ""
    return Markdown(f"{fence}{padding}{line}{padding}{fence}")


def fenced(value: object) -> Markdown:
    """A code block no line of the text can close: its fence is longer than any backtick run."""
    block = _visible(str(value), _KEPT_IN_BLOCK)
    longest = max((len(run) for run in _BACKTICKS.findall(block)), default=0)
    fence = "`" * max(3, longest + 1)
    return Markdown(f"{fence}text\n{block}\n{fence}")


def link(label: object, url: str) -> Markdown:
    """`[label](url)`: a ValueError for a URL that is not http(s); what could end the target
    (spaces, parentheses, angle brackets) percent-encoded."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    target = quote(url, safe="/:?#[]@!$&'*+,;=%~")
    return Markdown(f"[{markdown(label)}]({target})")


def formatted(template: LiteralString, *values: object) -> Markdown:
    """`template.format(*values)`, each value put in as `markdown` puts it."""
    return Markdown(template.format(*(markdown(value) for value in values)))


def joined(separator: LiteralString, values: Iterable[object]) -> Markdown:
    """The values, each as `markdown` puts it, `separator` between them."""
    return Markdown(separator.join(markdown(value) for value in values))


def _visible(line: str, kept: str) -> str:
    """Every character that is not printable, but those in `kept`, as its Python escape."""
    return terminal_text(line, kept=kept)


def template_value(value: object) -> Markdown:
    """What a template's `{{ }}` prints (the environment's `finalize`): Markdown as it is, a
    number as Python writes it, anything else as `text` without stripping it."""
    if isinstance(value, str) and not isinstance(value, Markdown):
        return text(value, strip=False)
    return markdown(value)


def template_join(values: Iterable[object], separator: object = "") -> Markdown:
    """Jinja's `join` filter for the templates: each value and the separator as
    `template_value` prints them."""
    return Markdown(template_value(separator).join(template_value(value) for value in values))


@overload
def render(template: jinja2.Template, context: Mapping[str, Any]) -> Markdown: ...
@overload
def render(
    template: jinja2.Template, context: Mapping[str, Any], max_bytes: int
) -> Markdown | None: ...
def render(
    template: jinja2.Template, context: Mapping[str, Any], max_bytes: int | None = None
) -> Markdown | None:
    """The rendered template; with `max_bytes`, None as soon as it grows over that many UTF-8
    bytes. Only a template whose `{{ }}` are escaped (`finalize=template_value`) renders: what
    it writes is Markdown."""
    if template.environment.finalize is not template_value:
        raise TypeError("the template's environment does not escape its values")
    chunks = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk.encode())
        if max_bytes is not None and size > max_bytes:
            return None
        chunks.append(chunk)
    return Markdown("".join(chunks))


def cut(markdown: Markdown, max_bytes: int) -> Markdown:
    """The markdown, or when it is too big its first whole lines, an open code fence closed,
    and a line that says it was cut."""
    data = markdown.encode()
    if len(data) <= max_bytes:
        return markdown
    note = f"\n✂️ The summary is cut here to stay under {max_bytes:,} bytes.\n"
    longest_fence = max((len(f) for f in re.findall(r"^`{3,}", markdown, re.MULTILINE)), default=0)
    budget = max(0, max_bytes - len(note.encode()) - longest_fence - 1)
    kept = data[:budget].decode(errors="ignore")
    kept = kept[: kept.rfind("\n") + 1]
    fence = _open_fence(kept)
    return Markdown(kept + (f"{fence}\n" if fence else "") + note)


def _open_fence(markdown: str) -> str:
    """The code fence still open at the end of the markdown, or ''."""
    fence = ""
    for line in markdown.split("\n"):
        run = re.match(r"`{3,}", line)
        if run is None:
            continue
        if not fence:
            fence = run.group()
        elif len(run.group()) >= len(fence) and not line[len(run.group()) :].strip():
            fence = ""
    return fence


def ended(markdown: Markdown, ending: Markdown, max_chars: int, note: Markdown) -> Markdown:
    """The markdown, a blank line and `ending` (its last line); when that is over `max_chars`
    characters, the markdown's first whole lines (an open code fence closed), `note`, then
    `ending`."""
    body = markdown.rstrip()
    whole = f"{body}\n\n{ending}"
    if len(whole) <= max_chars:
        return Markdown(whole)
    after = f"\n\n{note}\n\n{ending}"
    longest_fence = max((len(f) for f in re.findall(r"^`{3,}", body, re.MULTILINE)), default=0)
    kept = body[: max(0, max_chars - len(after) - longest_fence - 1)]
    kept = kept[: kept.rfind("\n")] if "\n" in kept else kept
    fence = _open_fence(kept)
    return Markdown(kept + (f"\n{fence}" if fence else "") + after)
