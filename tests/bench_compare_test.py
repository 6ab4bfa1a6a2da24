#!/usr/bin/env python3
"""scripts/bench_compare.py on saved outputs (tests/bench_compare/{old,new}): each bench's
format parses, a row's value is its best over the rounds, ratios are speed ratios (new/old
for bandwidth, old/new for times), rows below 0.98 are flagged, and rows of one build only
are listed without a ratio."""
import io
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import bench_compare  # noqa: E402

FIXTURES = os.path.join(HERE, "bench_compare")


def table():
    out = io.StringIO()
    flagged, bad = bench_compare.compare(os.path.join(FIXTURES, "old"),
                                         os.path.join(FIXTURES, "new"), 0.98, out)
    return out.getvalue(), flagged, bad


def row(text, name):
    for line in text.splitlines():
        if line.startswith(name + "  "):
            return line.split()
    raise AssertionError(f"no row {name!r} in:\n{text}")


class BenchCompare(unittest.TestCase):
    def test_elementwise_rows_take_the_best_round_and_flag_a_slowdown(self):
        text, _, _ = table()
        r = row(text, "copy f32 block 2048 warps 8")
        self.assertEqual(r[-4:], ["3920", "3700", "0.944", "<<"])  # round 2's 3920 is old's best
        self.assertEqual(row(text, "add f32 block 1024 warps 4")[-1], "1.008")
        self.assertEqual(row(text, "best copy f32")[-1], "0.987")
        self.assertEqual(row(text, "peer cuMemcpyDtoD (peer)")[-1], "1.000")

    def test_norms_json_lines_parse_and_a_new_row_has_no_ratio(self):
        text, _, _ = table()
        self.assertEqual(row(text, "softmax f32 4096x1024")[-1], "1.091")
        self.assertEqual(row(text, "rms_norm bf16 4096x4096")[-2:], ["0.963", "<<"])
        self.assertEqual(row(text, "layer_norm f32 4096x256")[-3:], ["-", "1400", "-"])

    def test_persistent_times_compare_old_over_new(self):
        text, _, _ = table()
        self.assertEqual(row(text, "padded_sum n=1048576 persistent")[-1], "1.071")
        self.assertEqual(row(text, "padded_sum n=1000 persistent")[-2:], ["0.833", "<<"])
        self.assertEqual(row(text, "eager call x[100,100]")[-1], "1.696")

    def test_counts_flagged_rows_and_reports_no_unreadable_file(self):
        text, flagged, bad = table()
        self.assertEqual(flagged, 3)
        self.assertEqual(bad, [])
        self.assertIn("3 row(s) below 0.98", text)

    def test_an_output_without_rows_is_reported(self):
        self.assertEqual(bench_compare.parse_elementwise("no GPU: libcuda.so.1 not found\n"), {})
        self.assertEqual(bench_compare.parse_norms("device: x\n{\"broken\": \n"), {})


if __name__ == "__main__":
    unittest.main()
