"""The Docker executor: the daemon, the container a run lives in, the environments it caches, the
tar transfer.
"""
