"""Every partitioner registered in Partitioners.def has a lit folder.

Usage: partitioner_folders.py PARTITIONERS_DEF LIT_PARTITION_DIR

Reads the names of ONNXP_PARTITIONER and ONNXP_CHAIN_PARTITIONER lines and
fails, naming them, if test/lit/Partition/<name>/ is missing or holds no
.test file (issue 26 item 6: hand-derived values per algorithm)."""
import os
import re
import sys

Def, Dir = sys.argv[1], sys.argv[2]
Names = re.findall(r'^ONNXP_(?:CHAIN_)?PARTITIONER\("([^"]+)"', open(Def).read(), re.M)
if not Names:
    sys.exit(f"error: no partitioner found in {Def}")
Missing = [N for N in Names
           if not os.path.isdir(os.path.join(Dir, N))
           or not any(F.endswith(".test") for F in os.listdir(os.path.join(Dir, N)))]
for N in Missing:
    print(f"error: partitioner '{N}' has no lit folder {Dir}/{N}/ with a .test file")
print(f"{len(Names)} partitioners, {len(Names) - len(Missing)} with a lit folder")
sys.exit(1 if Missing else 0)
