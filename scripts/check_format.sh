#!/usr/bin/env bash
# Checks that every C++ source of tessel is formatted by clang-format (.clang-format at the
# root). Exits 0 when clean, 1 listing the files to format (run with --fix to format them),
# 77 (skipped) when clang-format is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed: format check skipped (apt-get install clang-format)"
  exit 77
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cuh' '*.h' '*.cu' 2>/dev/null ||
                     find src include tests examples bench -name '*.[ch]pp' -o -name '*.cuh')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "not formatted by clang-format ($(clang-format --version)):"
  printf '  %s\n' "${bad[@]}"
  echo "run: bash scripts/check_format.sh --fix"
  exit 1
fi
echo "format: ${#files[@]} files clean"
