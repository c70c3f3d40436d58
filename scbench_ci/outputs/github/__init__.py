"""GitHub's side of a run: workflow commands and files, annotations, the REST API, artifacts."""
