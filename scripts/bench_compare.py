#!/usr/bin/env python3
"""Compares the outputs of tessel's benchmarks run by two builds (scripts/bench_compare.sh).

Reads <dir>/<bench>.<round>.txt for the old and the new build, where <bench> is
elementwise_bench (text table), norms_bench (JSON lines) or persistent_bench (--json lines),
and prints one table per benchmark: per row the old value, the new value and the ratio
of new speed to old speed (bandwidth: new / old; a time: old / new), so a ratio above 1
is always better and a row below --threshold (0.98) is flagged. A row's value is its best
over the rounds (the highest bandwidth, the lowest time). Exits 1 when a file has no row
that parses (a crashed or changed benchmark), else 0.

  bench_compare.py --old-dir OLD --new-dir NEW [--threshold 0.98]
"""
import argparse
import glob
import json
import os
import re
import sys

# elementwise_bench: "copy     f32   block 1024  warps 4      0.683    1179.3     0.962     0.981"
ELEMENTWISE_ROW = re.compile(
    r"^(copy|add)\s+(\w+)\s+block\s+(\d+)\s+warps\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s")
# "BEST add  f32    3412.5 GB/s = ..."
ELEMENTWISE_BEST = re.compile(r"^BEST\s+(\w+)\s+(\w+)\s+([\d.]+) GB/s")
# The peers: "cuMemcpyDtoD (peer)   0.352 ms   1525.4 GB/s" and the hand-written copy.
ELEMENTWISE_PEER = re.compile(r"^(cuMemcpyDtoD \(peer\)|hand-written NVRTC copy)\s+[\d.]+ ms\s+([\d.]+) GB/s")


def parse_elementwise(text):
    """Rows of elementwise_bench: {name: (value, unit, higher_is_better)}."""
    rows = {}
    for line in text.splitlines():
        line = line.strip()
        m = ELEMENTWISE_ROW.match(line)
        if m:
            kind, dtype, block, warps, _ms, gbs = m.groups()
            rows[f"{kind} {dtype} block {block} warps {warps}"] = (float(gbs), "GB/s", True)
            continue
        m = ELEMENTWISE_BEST.match(line)
        if m:
            kind, dtype, gbs = m.groups()
            rows[f"best {kind} {dtype}"] = (float(gbs), "GB/s", True)
            continue
        m = ELEMENTWISE_PEER.match(line)
        if m:
            rows[f"peer {m.group(1)}"] = (float(m.group(2)), "GB/s", True)
    return rows


def json_lines(text):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def parse_norms(text):
    """Rows of norms_bench (one JSON object per kernel, dtype and shape: the best config)."""
    rows = {}
    for o in json_lines(text):
        if "kernel" not in o or "gbs" not in o:
            continue
        name = f"{o['kernel']} {o['dtype']} {o['M']}x{o['N']}"
        if o.get("ok") is False:
            name += " (MISMATCH)"
        rows[name] = (float(o["gbs"]), "GB/s", True)
    return rows


def parse_persistent(text):
    """Rows of persistent_bench --json: padded_sum times and the graph-replay times."""
    rows = {}
    for o in json_lines(text):
        if o.get("bench") == "padded_sum":
            n = o["n"]
            rows[f"padded_sum n={n} persistent"] = (float(o["persistent_ms"]), "ms", False)
            rows[f"padded_sum n={n} flat"] = (float(o["flat_ms"]), "ms", False)
        elif o.get("bench") == "graph":
            rows["eager call x[100,100]"] = (float(o["eager_us"]), "us", False)
            rows["graph replay per call"] = (float(o["replay_us"]), "us", False)
    return rows


PARSERS = {
    "elementwise_bench": parse_elementwise,
    "norms_bench": parse_norms,
    "persistent_bench": parse_persistent,
}


def read_build(directory, bench):
    """The best value of each row over the rounds' files; the files that parsed to nothing."""
    best, empty = {}, []
    for path in sorted(glob.glob(os.path.join(directory, f"{bench}.*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            rows = PARSERS[bench](f.read())
        if not rows:
            empty.append(path)
        for name, (value, unit, higher) in rows.items():
            if name not in best:
                best[name] = (value, unit, higher)
            else:
                old = best[name][0]
                keep = max(old, value) if higher else min(old, value)
                best[name] = (keep, unit, higher)
    return best, empty


def speed_ratio(old, new, higher):
    if higher:
        return new / old if old > 0 else float("nan")
    return old / new if new > 0 else float("nan")


def compare(old_dir, new_dir, threshold, out=sys.stdout):
    """Prints the tables; returns (flagged rows, files without rows)."""
    flagged, bad_files = 0, []
    print(f"ratio = new speed / old speed: bandwidth new/old, time old/new; above 1 is better; "
          f"'<<' marks a ratio below {threshold}", file=out)
    for bench in PARSERS:
        old, old_empty = read_build(old_dir, bench)
        new, new_empty = read_build(new_dir, bench)
        bad_files += old_empty + new_empty
        if not old and not new:
            continue
        print(f"\n== {bench} ==", file=out)
        width = max(len(n) for n in list(old) + list(new))
        print(f"{'row':<{width}}  {'unit':<4} {'old':>10} {'new':>10} {'ratio':>7}", file=out)
        names = list(old) + [n for n in new if n not in old]
        for name in names:
            o, n = old.get(name), new.get(name)
            unit = (o or n)[1]
            ov = f"{o[0]:10.4g}" if o else f"{'-':>10}"
            nv = f"{n[0]:10.4g}" if n else f"{'-':>10}"
            if o and n:
                r = speed_ratio(o[0], n[0], o[2])
                mark = "  <<" if r < threshold else ""
                flagged += r < threshold
                rv = f"{r:7.3f}"
            else:
                rv, mark = f"{'-':>7}", ""
            print(f"{name:<{width}}  {unit:<4} {ov} {nv} {rv}{mark}", file=out)
    print(f"\n{flagged} row(s) below {threshold}", file=out)
    for path in bad_files:
        print(f"no benchmark row could be read from {path}", file=out)
    return flagged, bad_files


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old-dir", required=True)
    p.add_argument("--new-dir", required=True)
    p.add_argument("--threshold", type=float, default=0.98)
    a = p.parse_args()
    _, bad = compare(a.old_dir, a.new_dir, a.threshold)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
