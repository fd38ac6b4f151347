"""`python3 -m onnx_partition ARGS` runs the onnx-partition tool itself (the
same C++ code as the binary, in this process): same options, outputs,
messages and exit codes."""
import sys

from onnx_partition._onnx_partition import main

sys.exit(main(["onnx-partition"] + sys.argv[1:]))
