"""Scripts run as processes of their own (the test runner in the container, the subreaper): they
import nothing of the package, and what the evaluator shares with them lives here. The runner,
shipped alone, holds what all three share: the one walk of /proc (the subreaper loads it from the
file beside it; the evaluator imports it).
"""
