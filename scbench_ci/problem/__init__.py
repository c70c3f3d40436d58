"""The problem stage: config.yaml, read by a hardened loader, as a typed problem."""
