#!/usr/bin/env bash
# Configures and builds tessel into ./build (Release). Installs build deps if missing.
# Arguments name targets to build (default: all), e.g. `bash scripts/build.sh tessel_demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build "${targets[@]}"
