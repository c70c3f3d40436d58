"""A pytest plugin that prints each collected test's node id and the names of its markers, one
test a line (`pytest --collect-only -p testing.collected_markers`): what a `-m` expression is
matched against."""

from __future__ import annotations

import pytest

PREFIX = "markers of "


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        names = sorted({marker.name for marker in item.iter_markers()})
        print(f"{PREFIX}{item.nodeid}\t{' '.join(names)}")
