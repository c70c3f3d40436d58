"""The package's one version: the release tag's, the action image's tag's and the wheel's."""

__version__ = "0.1.0"
