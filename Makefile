.PHONY: example test test-fast lint format dist clean

example:  ## evaluate a bundled example problem
	scripts/example.sh

test:  ## the whole suite: lint, types, tests
	scripts/test.sh

test-fast:  ## the tests that need no Docker, Ray, browser, npm or real evaluation
	.venv/bin/pytest -n 2 -m "not docker and not ray and not browser and not npm and not slow and not integration"

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports --no-cache

format:
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

dist:  ## the sdist and the wheel in dist/, as the release builds them
	.venv/bin/python -m build

clean:
	rm -rf .venv .scbench .pytest_cache .mypy_cache .ruff_cache *.egg-info build dist
