.PHONY: example test lint format dist clean

example:  ## evaluate a bundled example problem
	scripts/example.sh

test:  ## the whole suite: lint, types, tests
	scripts/test.sh

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports --no-cache

format:
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

dist:  ## the sdist and the wheel in dist/, as the release builds them
	.venv/bin/python -m build

clean:
	rm -rf .venv .scbench .pytest_cache .mypy_cache .ruff_cache *.egg-info build dist
