"""The caller's variables a run may see: installer settings, never credentials."""

import pytest

from scbench_ci.executors.child_env import index_variables, installer_variables


@pytest.mark.parametrize(
    "value",
    [
        "https://user:token@pypi.example/simple",
        "https://token@pypi.example/simple",
        "user:token@pypi.example/simple",
        "internal=https://user:token@pypi.example/simple",
        "internal=https://token@pypi.example/simple",
        "https://pypi.org/simple internal=https://user:token@pypi.example/simple",
        "http://[::1",  # unparseable: refused rather than guessed
    ],
)
def test_a_url_with_credentials_stays_out(value: str) -> None:
    for name in ("UV_INDEX", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        assert index_variables({name: value}) == {}


def test_urls_without_credentials_pass() -> None:
    caller = {
        "UV_INDEX": "internal=https://pypi.example/simple other=https://mirror.example/simple",
        "UV_DEFAULT_INDEX": "https://pypi.org/simple",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        "GITHUB_TOKEN": "ghs_secret",
    }
    assert installer_variables(caller) == {
        "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        "UV_DEFAULT_INDEX": "https://pypi.org/simple",
        "UV_INDEX": "internal=https://pypi.example/simple other=https://mirror.example/simple",
        "HTTPS_PROXY": "http://proxy.example:3128",
    }
