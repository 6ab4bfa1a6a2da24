#!/usr/bin/env python3
"""Runs persistent_bench --json and times torch's x[:n].sum(1) for the same sizes in the
same invocation, on the same GPU; prints time per call and ratios.
   python3 bench/persistent_vs_torch.py [path/to/persistent_bench]"""
import json
import subprocess
import sys

import torch


def torch_ms(fn, reps=20, rounds=5):
    for _ in range(3):
        fn()
    times = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / reps)
    return sorted(times)[len(times) // 2]


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/bench/persistent_bench"
    try:
        lines = subprocess.run([exe, "--json"], check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"{exe} not found: build first (bash scripts/build.sh)")
    print(f"{'n':>9} {'tessel persistent ms':>21} {'tessel flat ms':>15} {'torch ms':>9} "
          f"{'torch/persistent':>17} {'flat/persistent':>16}")
    for line in lines.splitlines():
        r = json.loads(line)
        if r["bench"] == "padded_sum":
            x = torch.randn(r["rows"], r["cols"], device="cuda")
            n = r["n"]
            t = torch_ms(lambda: x[:n].sum(1))
            print(f"{n:>9} {r['persistent_ms']:>21.4f} {r['flat_ms']:>15.4f} {t:>9.4f} "
                  f"{t / r['persistent_ms']:>17.3f} {r['flat_ms'] / r['persistent_ms']:>16.3f}")
        elif r["bench"] == "graph":
            print(f"per call: eager {r['eager_us']:.2f} us, graph replay {r['replay_us']:.2f} us, "
                  f"eager/replay {r['eager_us'] / r['replay_us']:.2f}")


if __name__ == "__main__":
    main()
