# Reads a --report and its pipeline.json (Partition/pipeline-ilp/in-flight-graph.test): the
# pipeline blocks, and whether each device's memory terms sum to its peak.
import json
import sys

report = json.load(open(sys.argv[1]))
pipe = json.load(open(sys.argv[2]))
p = report["pipeline"]
print("report pipeline:", p["schedule"], "named=%s" % p["schedule_named"],
      [(d["device"], d["stage_position"], d["microbatches"]) for d in p["in_flight"]])
peaks = {}
for d in report["devices"]:
    m = d.get("memory_by_term")
    if not m:
        continue
    total = sum(m[k] for k in ("weights", "gradients", "optimizer_state", "saved_activations", "transient",
                               "in_flight_microbatches"))
    peaks[d["device"]] = m["peak"]
    print("%s terms sum to peak: %s, weights %d, in flight %d" %
          (d["device"], abs(total - m["peak"]) <= 1e-6 * m["peak"] and m["peak"] == d["memory"], m["weights"],
           m["in_flight_microbatches"]))
q = pipe["pipeline"]
print("pipeline.json:", q["schedule"], "named=%s" % q["schedule_named"],
      [(d["device"], d["stage_position"], d["in_flight_microbatches"]) for d in q["devices"]],
      "peaks equal:", all(peaks[d["device"]] == d["peak_memory_bytes"] for d in q["devices"]))
