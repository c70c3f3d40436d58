"""GitHub's side of a run: the services an action talks to."""
