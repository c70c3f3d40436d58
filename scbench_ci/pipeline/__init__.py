"""The run's stages a core composes: the jobs side by side (`evaluation`), one job from problem
to results (`job_evaluation`), where it runs (`placement`), a checkpoint's shards (`shards`),
shards merged as one run (`merge`) and GitHub's matrix of them (`matrix`)."""
