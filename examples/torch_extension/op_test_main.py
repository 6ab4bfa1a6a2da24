"""What test_rms_norm.py and test_dot_ops.py share: when to skip their CUDA tests, and their
entry point (load the operators' library, then run unittest).

The library is the first argument (libtessel_torch_examples.so), else the
TESSEL_TORCH_EXAMPLES_LIB environment variable. TESSEL_TORCH_REQUIRE_CUDA=1 makes a machine
without a visible GPU a failure instead of skipping the CUDA tests.
"""

import os
import sys
import unittest

import torch


def cuda_skip_reason():
    """None where the CUDA tests run, else why they are skipped."""
    if torch.cuda.is_available():
        return None
    if os.environ.get("TESSEL_TORCH_REQUIRE_CUDA") == "1":
        return None  # the tests run and fail
    return "torch sees no CUDA device"


def main(script):
    """Loads the library named on the command line (or by the environment) and runs the
    calling module's tests; `script` names it in the usage line."""
    lib = sys.argv.pop(1) if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else \
        os.environ.get("TESSEL_TORCH_EXAMPLES_LIB")
    if not lib:
        sys.exit(f"usage: {script} LIBRARY (libtessel_torch_examples.so) [unittest args]")
    torch.ops.load_library(lib)
    print(f"torch {torch.__version__}, CUDA "
          f"{'available' if torch.cuda.is_available() else 'not available'}", flush=True)
    unittest.main(module="__main__", verbosity=2)
