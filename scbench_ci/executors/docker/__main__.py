"""`python -m scbench_ci.executors.docker`: have the default image here, pulled or built (the
test suite's provisioning runs it), and say how long that took."""

from __future__ import annotations

import sys
import time

from scbench_ci.errors import InfrastructureError
from scbench_ci.executors.docker.daemon import connect, docker_errors
from scbench_ci.executors.docker.image_build import default_image
from scbench_ci.trust.terminal import inert


def main() -> int:
    started = time.monotonic()
    with docker_errors():
        client = connect()
        try:
            image = default_image(client, sys.stdout)
        except InfrastructureError as error:
            print(inert(str(error), one_line=True), file=sys.stderr)
            return 1
    how = f"SCBench's layer built here on {image.built_from}" if image.built_from else "published"
    print(
        inert(
            f"{image.name}: {image.reference} ({image.id[:19]}), {how}, "
            f"toolchains {image.toolchains or 'unknown'}, in {time.monotonic() - started:.1f}s",
            one_line=True,
        )
    )
    return 0


sys.exit(main())
