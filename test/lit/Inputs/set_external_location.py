#!/usr/bin/env python3
"""set_external_location.py IN OUT LOCATION: writes IN with every external
tensor's location set to LOCATION (the data itself is not read or moved)."""
import sys

import onnx

m = onnx.load(sys.argv[1], load_external_data=False)
for t in m.graph.initializer:
    for e in t.external_data:
        if e.key == "location":
            e.value = sys.argv[3]
onnx.save(m, sys.argv[2])
