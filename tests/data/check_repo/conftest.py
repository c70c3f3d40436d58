# The problems here are data for the check's tests, run by scbench-ci, not by this suite.
collect_ignore = ["problems"]
