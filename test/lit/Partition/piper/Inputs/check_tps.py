"""Exit 1 unless the summary's time per sample is within 1e-9 relative of the reference."""
import re
import sys

text = open(sys.argv[1]).read()
want = float(sys.argv[2])
m = re.search(r"^time per sample: (\S+) s", text, re.M)
if not m:
    sys.exit("no 'time per sample' line in " + sys.argv[1])
got = float(m.group(1))
if abs(got - want) > 1e-9 * abs(want):
    sys.exit("time per sample %.17g differs from the reference %.17g" % (got, want))
