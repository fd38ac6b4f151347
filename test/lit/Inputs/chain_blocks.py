#!/usr/bin/env python3
"""chain_blocks.py N OUT [WEIGHT_BYTES]: writes an onnx-partition-chain of N
identical blocks (F 1 ms, B 2 ms, 1 kB output, WEIGHT_BYTES of weights,
default 1 kB). Issue 20 ("Size"): the inputs of the size-limit tests, made
by the test in well under a second."""
import sys

n, out = int(sys.argv[1]), sys.argv[2]
weights = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
block = '{"forwardTime": 1, "backwardTime": 2, "outputBytes": 1000, "weightBytes": %d}' % weights
with open(out, "w") as f:
    f.write('{"format": "onnx-partition-chain", "blocks": [' + ",".join([block] * n) + "]}")
