#!/usr/bin/env bash
# Checks that the folders of src/ include each other without a cycle (the layering of
# docs/DECISIONS.md, "Source folders are layers"). An edge A -> B is a file of src/A that
# includes "B/...", B another folder of src/. Exits 0 when the graph is acyclic, 1 printing
# a cycle and, for each of its edges, a file that makes it.
# Usage: check_layers.sh [SRC_DIR] (default: the repository's src/).
set -euo pipefail
src="${1:-$(dirname "$0")/../src}"
cd "$src"

# "A B" per edge A -> B, sorted and unique.
edges="$(for dir in */; do
  a="${dir%/}"
  (grep -rhoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' "$a" 2>/dev/null || true) |
    sed -E 's/.*"([a-z_]+)\/$/\1/' | sort -u | while read -r b; do
      if [ "$b" != "$a" ] && [ -d "$b" ]; then echo "$a $b"; fi
    done
done | sort -u)"

if loop="$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null)" && [ -z "$loop" ]; then
  echo "layers: $(printf '%s\n' "$edges" | grep -c .) folder edges in $(pwd), no cycle"
  exit 0
fi

# tsort names one cycle's folders in order after "input contains a loop:".
mapfile -t cycle < <(printf '%s\n' "$loop" | sed -n '/contains a loop/,$p' | tail -n +2 |
                     sed -E 's/^tsort: //' | sed -n '1,/contains a loop/p' |
                     grep -v 'contains a loop')
echo "src/ folders include each other in a cycle: $(printf '%s -> ' "${cycle[@]}")${cycle[0]}"
for i in "${!cycle[@]}"; do
  a="${cycle[$i]}"
  b="${cycle[$(((i + 1) % ${#cycle[@]}))]}"
  f="$(grep -rlE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$b/" "$a" | sort | head -n 1)"
  echo "  $a -> $b: $(basename "$(pwd)")/$f"
done
echo "move the shared code to a folder below both (docs/DECISIONS.md lists the layers)"
exit 1
