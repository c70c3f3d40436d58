"""The README and docs/ held to what they point at and what they document: every relative link and
anchor resolves; docs/cli.md documents every flag of every command, read from the real parsers,
and docs/action.md every input and output of action.yml, each exactly once and nothing else; no
line is over 100 characters; the README stays a door, not the house."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from scbench_ci.cli import main as cli_main
from scbench_ci.cli.forgiving import ForgivingParser
from testing.markdown import DOCS, anchors, entries, entry_names, links, section
from testing.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
CLI_PAGE = REPO_ROOT / "docs" / "cli.md"
ACTION_PAGE = REPO_ROOT / "docs" / "action.md"
ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
PAGES = [pytest.param(path, id=str(path.relative_to(REPO_ROOT))) for path in DOCS]


class _Parsed(Exception):
    """Raised in place of parsing, to hand back the parser the CLI built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _cli_parser(monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The top-level parser exactly as `scbench-ci` builds it, caught as it starts parsing."""

    def catch(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(self)

    monkeypatch.setattr(ForgivingParser, "parse_args", catch)
    with pytest.raises(_Parsed) as caught:
        cli_main.parse_arguments(["evaluate"])
    return caught.value.parser


def _flags(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """Each option's spellings (`('-j', '--jobs')`), `--help` left out: argparse's own."""
    return [
        tuple(action.option_strings)
        for action in parser._actions
        if action.option_strings and not isinstance(action, argparse._HelpAction)
    ]


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (subcommands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subcommands.choices)


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for link in links(page):
        if link.target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = link.target.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists() or not target.is_relative_to(REPO_ROOT):
            broken.append(f"{page.name}:{link.line}: {link.target}: no such file")
        elif anchor and anchor not in anchors(target.read_text()):
            broken.append(f"{page.name}:{link.line}: {link.target}: no such heading")
    assert broken == []


def test_the_anchor_check_finds_a_broken_anchor_and_a_missing_file(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n[ok](#a-title) [bad](#a-titl) [gone](missing.md) `[code](#x)`\n")
    assert [link.target for link in links(page)] == ["#a-title", "#a-titl", "missing.md"]
    assert anchors(page.read_text()) == {"a-title"}


@pytest.mark.parametrize("page", PAGES)
def test_no_line_is_longer_than_100_characters(page: Path) -> None:
    lines = page.read_text().splitlines()
    assert [
        f"{number}: {len(line)}" for number, line in enumerate(lines, 1) if len(line) > 100
    ] == []


def test_the_readme_is_short_and_points_to_every_docs_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 320
    pages = {link.target.partition("#")[0] for link in links(README)}
    for page in DOCS[1:]:
        assert str(page.relative_to(REPO_ROOT)) in pages, page


def test_the_readme_names_the_commands_that_set_up_and_run_on_a_fresh_machine() -> None:
    development = section(README.read_text(), "## Development")
    for command in ("make example", "scripts/example.sh", "make test", "scripts/test.sh"):
        assert f"`{command}`" in development, command
    assert "`make test-fast`" in development
    assert "scripts/test.sh" in (REPO_ROOT / ".ci" / "run").read_text()
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "example:" in makefile and "\tscripts/example.sh" in makefile
    assert "test:" in makefile and "\tscripts/test.sh" in makefile


def test_every_flag_of_every_command_is_documented_once_in_the_cli_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = CLI_PAGE.read_text()
    parser = _cli_parser(monkeypatch)
    commands = {"scbench-ci": parser} | {
        f"scbench-ci {name}": sub for name, sub in _commands(parser).items()
    }
    assert len(commands) == 1 + len(cli_main.COMMANDS)
    for title, command in commands.items():
        documented = [entry_names(item) for item in entries(section(text, f"## {title}"))]
        names = [name for entry in documented for name in entry]
        real = _flags(command)
        # Each spelling once, nothing that is not a flag, and an option's spellings in one entry.
        assert sorted(names) == sorted(s for spellings in real for s in spellings), title
        for spellings in real:
            assert any(set(spellings) <= set(entry) for entry in documented), spellings


def test_every_input_and_output_of_action_yml_is_documented_once_with_its_default() -> None:
    text = ACTION_PAGE.read_text()
    inputs = entries(section(text, "## Inputs"))
    assert [entry_names(item) for item in inputs] == [[name] for name in ACTION["inputs"]]
    for item, (name, spec) in zip(inputs, ACTION["inputs"].items(), strict=True):
        head = re.match(rf"- `{name}` \(default:? (.+?)\): ", item)
        assert head, item
        default = head.group(1)
        if spec.get("default"):
            assert default == f"`{spec['default']}`", name
        else:  # empty in action.yml: the entry says in words what decides
            assert not re.fullmatch(r"`[^`]*`", default), name
    outputs = [name for item in entries(section(text, "## Outputs")) for name in entry_names(item)]
    assert sorted(outputs) == sorted(ACTION["outputs"])
