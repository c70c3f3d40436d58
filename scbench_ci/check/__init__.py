"""`scbench-ci check`: whether a problem is sound, as findings with their file and line."""
