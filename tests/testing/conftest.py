"""These tests talk to doubles of GitHub's services on this machine."""

import pytest


@pytest.fixture(autouse=True)
def _loopback(loopback_without_proxy: None) -> None:
    """See `testing.azurite.loopback_without_proxy`."""
