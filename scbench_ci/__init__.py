"""scbench-ci: evaluate a submission against an SCBench problem checkpoint."""

__version__ = "0.1.0"
