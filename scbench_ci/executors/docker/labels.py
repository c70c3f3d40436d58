"""The names cleanup finds Docker's leftovers by, apart from the code that removes them (which
loads Docker's SDK): the CLI's help needs only the names."""

CACHE_LABEL = "dev.scbench-ci.cache"
"""On every cache volume (data and marker); its value is the kind. `cleanup --volumes` removes
them by it."""
LEGACY_CACHE_VOLUME = "scbench-ci-runner-cache"
"""The uv cache volume that runs and builds of earlier versions shared: removed too."""
