"""Issue 24: no block of a chain JSON holds more than a share of the chain's
time (forward + backward) unless it is a single node. "A single node":
one forward source, not counting backward nodes (ORT's and the derived
backward's names contain "_Grad") and weight Transposes (constant-like,
they ride with their reader). Prints one line per chain; exits 1 on a
violation, naming the block."""
import json
import sys

share = float(sys.argv[1])
bad = False
for path in sys.argv[2:]:
    chain = json.load(open(path))
    blocks = chain["blocks"]
    times = [b["forwardTime"] + b["backwardTime"] for b in blocks]
    total = sum(times)
    worst = max(range(len(blocks)), key=lambda i: times[i])
    for b, t in zip(blocks, times):
        forward = [s for s in b["sources"] if "_Grad" not in s and not s.rsplit("/", 1)[-1].startswith("Transpose")]
        if t > share * total and len(forward) > 1:
            print("FAIL %s: block '%s' holds %.1f%% with %d forward nodes" % (path, b["name"], 100 * t / total, len(forward)))
            bad = True
    print("%d blocks, largest %.1f%%" % (len(blocks), 100 * times[worst] / total))
sys.exit(1 if bad else 0)
