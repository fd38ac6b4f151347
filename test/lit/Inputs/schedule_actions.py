# Prints pipeline.json's schedule_actions (issue 35) one rank a line, and
# checks the CSV beside it holds the same lists, every cell matching
# torch.distributed.pipelining's _Action pattern.
import csv
import json
import os
import re
import sys

d = sys.argv[1]
A = json.load(open(os.path.join(d, "pipeline.json")))["schedule_actions"]
print(f"schedule {A['schedule']}, {A['microbatches']} micro-batches, splits the backward: {A['splits_backward']}, "
      f"stage ranks {A['stage_ranks']}, runnable {A['runnable']}" + (f" ({A['not_runnable']})" if not A["runnable"] else ""))
for r in A["ranks"]:
    print(f"rank {r['rank']} {r['device']} stages {r['stages']}: {' '.join(r['actions'])}")
torch_action = re.compile(r"(\d+)(F|I|B|W|UNSHARD|RESHARD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*)")
rows = list(csv.reader(open(os.path.join(d, A["csv"]), newline="")))
same = rows == [r["actions"] for r in A["ranks"]]
parsed = all(torch_action.fullmatch(c) for row in rows for c in row)
print(f"csv {A['csv']}: " + ("the same lists" if same else "DIFFERENT lists") + ", " +
      ("every action torch's pattern" if parsed else "an action torch cannot read"))
