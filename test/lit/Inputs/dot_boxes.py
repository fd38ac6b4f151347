"""Checks a grouped --dot picture against the graph it draws.

Usage: dot_boxes.py PLAN.dot REPORT.json

Prints the number of clusters and boxes, and fails unless the boxes' node
counts add up to the report's assignment (every node drawn exactly once),
each cluster's label counts the nodes of its boxes, and every stage of the
report has its cluster."""
import json
import re
import sys

dot = open(sys.argv[1]).read()
report = json.load(open(sys.argv[2]))
clusters = re.findall(
    r'subgraph cluster_(\w+) \{\n    label="(?:stage (\d+) on )?(\w+)\\n(\d+) nodes, [^"]*";(.*?)\n  \}', dot, re.S)
boxes = 0
total = 0
for name, stage, device, nodes, body in clusters:
    counts = [int(n) for n in re.findall(r'\\n(\d+) nodes?, ', body)]
    if sum(counts) != int(nodes):
        sys.exit(f"error: cluster {name} says {nodes} nodes, its boxes hold {sum(counts)}")
    boxes += len(counts)
    total += sum(counts)
if total != len(report["assignment"]):
    sys.exit(f"error: the boxes hold {total} nodes, the plan has {len(report['assignment'])}")
stages = {a["stage"] for a in report["assignment"] if "stage" in a}
drawn = {int(s) for _, s, _, _, _ in clusters if s}
if stages != drawn:
    sys.exit(f"error: stages {sorted(stages - drawn)} have no cluster")
print(f"{len(clusters)} stage clusters, {boxes} boxes, {total} nodes")
