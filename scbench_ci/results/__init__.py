"""The results stage: each checkpoint's tests, groups, counts and verdict; results.json and the
runs it is compared with.
"""
