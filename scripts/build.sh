#!/usr/bin/env bash
# Configures and builds tessel into ./build (Release). Installs build deps if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
