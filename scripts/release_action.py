"""Point action.yml at the released image of this version, for a release commit.

    python scripts/release_action.py REPOSITORY        e.g. ghcr.io/scbench/evaluate

Replaces `image: Dockerfile` under `runs:` (development: the runner builds the image) with
`image: docker://REPOSITORY:<version>` (the runner pulls it), the version being the package's
(scbench_ci/foundation/version.py). Nothing else in the file changes. Prints the new image
reference.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTION_YML = ROOT / "action.yml"
DEVELOPMENT_IMAGE = re.compile(r"^(  image: )Dockerfile$", re.MULTILINE)
# docker's reference grammar: lower-case path components separated by /, after a registry host.
REPOSITORY = re.compile(r"[a-z0-9.-]+(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)+")


def package_version() -> str:
    sys.path.insert(0, str(ROOT))
    from scbench_ci.foundation.version import __version__

    return __version__


def released(action_yml: str, image: str) -> str:
    if len(DEVELOPMENT_IMAGE.findall(action_yml)) != 1:
        raise ValueError("action.yml: no `image: Dockerfile` line under runs: to replace")
    return DEVELOPMENT_IMAGE.sub(lambda found: found.group(1) + image, action_yml)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not REPOSITORY.fullmatch(argv[0]):
        print("usage: release_action.py REPOSITORY (an image name in lower case)", file=sys.stderr)
        return 2
    image = f"docker://{argv[0]}:{package_version()}"
    try:
        text = released(ACTION_YML.read_text(encoding="utf-8"), image)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    ACTION_YML.write_text(text, encoding="utf-8")
    print(image)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
