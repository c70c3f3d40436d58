"""Scripts run as processes of their own (the test runner in the container, the subreaper): they
import nothing of the package, and what the evaluator shares with them lives here.
"""
