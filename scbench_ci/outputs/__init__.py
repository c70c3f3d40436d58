"""What a person or a workflow reads: the summary, the console report, the exit code, GitHub's
outputs.
"""
