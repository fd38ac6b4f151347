# Prints pipeline.json's stages with their kind (issue 35, item 3: "W" for a
# weight-gradient model split off a stage's backward), their nodes and the
# stages each action-list rank runs, and checks from the stage models alone
# that no W model feeds another stage: every W output is a graph output,
# so no W node lies on a path to a stage's input gradients.
# Usage: weight_gradient_stages.py STAGE_DIR
import json
import os
import sys

import onnx

d = sys.argv[1]
pj = json.load(open(os.path.join(d, "pipeline.json")))
graph_outputs = {o["name"] for o in pj["graph_outputs"]}
for s in pj["stages"]:
    nodes = [n.name for n in onnx.load(os.path.join(d, s["file"])).graph.node]
    of = f" of stage {s['weight_gradients_of']}" if "weight_gradients_of" in s else ""
    print(f"stage {s['id']} {s['name']} kind {s.get('kind', '-')}{of}: {' '.join(nodes)}")
    if s.get("kind") == "W":
        feeds = [o["tensor"] for o in s["outputs"] if o["to"] or o["tensor"] not in graph_outputs]
        print(f"  W outputs only graph outputs: {not feeds}" + (f" (feeds {feeds})" if feeds else ""))
        print(f"  W inputs: {' '.join(i['tensor'] + '@' + str(i['from']) for i in s['inputs'])}")
for r in pj["schedule_actions"]["ranks"]:
    print(f"rank {r['rank']} {r['device']} stages {r['stages']}")
