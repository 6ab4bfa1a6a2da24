#!/usr/bin/env bash
# Builds and runs the whole test suite. CPU tests always run; GPU tests (label gpu) skip
# with a message where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
