# The scbench/evaluate action. Releases pin BASE_IMAGE by digest.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH

# Dependencies first, in their own layer: code changes don't reinstall them.
COPY requirements/action.txt /opt/scbench-ci/requirements/action.txt
RUN python3 -m venv /opt/venv \
    && pip install --requirement /opt/scbench-ci/requirements/action.txt

COPY pyproject.toml README.md entrypoint.py /opt/scbench-ci/
COPY scbench_ci /opt/scbench-ci/scbench_ci
RUN pip install --no-deps /opt/scbench-ci \
    && rm -rf /opt/scbench-ci/build

ENTRYPOINT ["/opt/venv/bin/python", "/opt/scbench-ci/entrypoint.py"]
