"""What one job is made of, below the results: the jobs planned (`plan`), the folder its tests
run in (`workspace`), the pytest command (`command`) and the submission's set-up
(`environment`), what `--skip-existing` compares (`fingerprint`), and the reports pytest writes
read into test outcomes (`reports`)."""
