#!/usr/bin/env python3
"""Opens outputs with python3's own parsers (issue 25, item 4).

  parse_outputs.py svg FILE WORD   -> prints "title: <text>" of the first
                                      <text> holding WORD; fails on any
                                      <script> element or a parse error
  parse_outputs.py json FILE [KEY] -> parses FILE; prints "KEY: <value>"
"""
import json
import sys
import xml.etree.ElementTree as ET

kind, path = sys.argv[1:3]
if kind == "svg":
    tree = ET.parse(path)
    ns = "{http://www.w3.org/2000/svg}"
    if list(tree.iter(ns + "script")) or list(tree.iter("script")):
        print("FAIL: a <script> element")
        sys.exit(1)
    texts = [t.text for t in tree.iter(ns + "text") if t.text and sys.argv[3] in t.text]
    print("title: " + texts[0])
else:
    data = json.load(open(path))
    if len(sys.argv) > 3:
        print("%s: %s" % (sys.argv[3], data[sys.argv[3]]))
