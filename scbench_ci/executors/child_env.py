"""The environment a run's processes get: built from scratch, never the caller's.

Only the variables that tell package installers how to reach an index (CA bundles, index URLs,
proxies) pass through from the caller, and a URL among them that carries credentials does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

_INDEX_NAME = re.compile(r"[A-Za-z0-9_.-]+=")

LOCALE = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
CERTIFICATE_VARIABLES = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "CURL_CA_BUNDLE",
    "UV_NATIVE_TLS",
)
URL_VARIABLES = (
    "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)


def installer_variables(caller: Mapping[str, str]) -> dict[str, str]:
    """The caller's CA bundle settings and index/proxy URLs."""
    certificates = {name: caller[name] for name in CERTIFICATE_VARIABLES if caller.get(name)}
    return {**certificates, **index_variables(caller)}


def index_variables(caller: Mapping[str, str]) -> dict[str, str]:
    """The caller's index and proxy URLs, except those that carry credentials."""
    return {
        name: caller[name]
        for name in URL_VARIABLES
        if caller.get(name) and not any(_has_credentials(url) for url in caller[name].split())
    }


def _has_credentials(item: str) -> bool:
    """Whether the URL carries a user or password; uv's indexes may be named (`name=URL`)."""
    named = _INDEX_NAME.match(item)
    url = item[named.end() :] if named else item
    try:
        parts = urlsplit(url if "://" in url else f"//{url}")
    except ValueError:
        return True
    return parts.username is not None or parts.password is not None


def run_environment(
    *,
    path: str,
    home: str,
    extra: Mapping[str, str],
    variables: Mapping[str, str],
    locale: Mapping[str, str] = LOCALE,
) -> dict[str, str]:
    """Base (PATH, HOME, locale) + executor extras + the command's variables, later ones winning,
    except that PATH and HOME stay the executor's."""
    env = {**locale, **extra, **variables}
    env["PATH"] = path
    env["HOME"] = home
    return env
