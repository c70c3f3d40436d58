"""`python -m scbench_ci.executors.docker [RECIPE ...]`: have the default image of each recipe
here (all of them when none is named: SCBench 1.0's, then the paper runner's), pulled or built
(the test suite's provisioning runs it), and say how long that took and what each image lacks of
its recipe's programs."""

from __future__ import annotations

import sys
import time

from scbench_ci.executors.docker.daemon import connect, docker_errors
from scbench_ci.executors.docker.image_build import default_image
from scbench_ci.executors.docker.image_recipe import RECIPES
from scbench_ci.executors.docker.image_versions import image_facts, image_path
from scbench_ci.foundation.errors import InfrastructureError
from scbench_ci.trust.terminal import inert


def main(names: list[str]) -> int:
    unknown = [name for name in names if name not in RECIPES]
    if unknown:
        print(f"no recipe {unknown[0]!r}: one of {', '.join(RECIPES)}", file=sys.stderr)
        return 2
    with docker_errors():
        client = connect()
        for recipe in [RECIPES[name] for name in names or RECIPES]:
            started = time.monotonic()
            try:
                image = default_image(client, sys.stdout, recipe)
            except InfrastructureError as error:
                print(inert(str(error), one_line=True), file=sys.stderr)
                return 1
            how = (
                f"{recipe.title}'s layer built here on {image.built_from}"
                if image.built_from
                else "published"
            )
            print(
                inert(
                    f"{image.name}: {image.reference} ({image.id[:19]}), {how}, "
                    f"toolchains {image.toolchains or 'unknown'}, "
                    f"in {time.monotonic() - started:.1f}s",
                    one_line=True,
                )
            )
            facts = image_facts(client, image.id, image_path(client, image.reference))
            for missing in recipe.missing(facts.programs):
                print(
                    inert(
                        f"{image.name}: lacks {missing.program}: {missing.without}", one_line=True
                    )
                )
    return 0


sys.exit(main(sys.argv[1:]))
