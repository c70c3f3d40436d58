# The problem here is data for the inventory's tests, run by scbench-ci, not by this suite.
collect_ignore = ["keywords"]
