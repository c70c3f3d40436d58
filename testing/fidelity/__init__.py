"""SCBench's own evaluation flow, re-created for differential tests."""
