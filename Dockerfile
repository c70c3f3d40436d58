# The scbench/evaluate action. The base is pinned by digest (the multi-architecture index of
# python:3.12-slim), so a release is built on the same bytes for amd64 and arm64; the tests build
# on a local stand-in with --build-arg BASE_IMAGE=....
ARG BASE_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea

# Build stage: a virtual environment with the pinned runtime requirements and the package.
FROM ${BASE_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# Dependencies first, in their own layer: code changes don't reinstall them.
COPY requirements/action.txt /src/requirements/action.txt
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --requirement /src/requirements/action.txt
COPY pyproject.toml README.md /src/
COPY scbench_ci /src/scbench_ci
# The build tools (pip, setuptools) leave the environment before it is copied on.
RUN /opt/venv/bin/pip install --no-deps /src \
    && /opt/venv/bin/python -m pip uninstall --yes --quiet pip setuptools

# Final stage: the base, the environment and the entrypoint; no sources, no build tools.
FROM ${BASE_IMAGE}
# The name the release published SCBench's evaluation image under (empty: the package's).
ARG EVALUATION_IMAGE=""
ENV SCBENCH_EVALUATION_IMAGE=${EVALUATION_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH
COPY --from=build /opt/venv /opt/venv
COPY entrypoint.py /opt/scbench-ci/entrypoint.py
ENTRYPOINT ["/opt/venv/bin/python", "/opt/scbench-ci/entrypoint.py"]
