#!/usr/bin/env bash
# Installs what building tessel needs (Debian/Ubuntu packages), when missing. The CUDA
# toolkit (headers, NVRTC) is expected under $CUDA_HOME or /usr/local/cuda.
set -euo pipefail
need=()
for pkg in cmake ninja-build g++ libgtest-dev nlohmann-json3-dev libfmt-dev libcli11-dev \
           libdlpack-dev libxxhash-dev pkg-config clang-format; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "tessel needs the CUDA toolkit headers and NVRTC: set CUDA_HOME (looked in $cuda)" >&2
  exit 1
fi
