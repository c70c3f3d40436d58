"""Test doubles and helpers the suite uses: GitHub's runner and services, npm tools, SCBench's own
flow.
"""
