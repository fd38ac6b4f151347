#!/usr/bin/env python3
"""Rewrite the unit tests' hand-written Error/Expected checks into the macros
of test/support/ExpectedAssert.h (issue 32, item 6).

    python3 test/support/use_expected_asserts.py test/unit [more files or folders]

Rewrites, in every .cpp/.h given (folders: recursively):
  ASSERT_TRUE(static_cast<bool>(X)) << X.takeError().message();   -> ASSERT_EXPECTED(X);
  ASSERT_TRUE(X) << CTX << ": " << X.takeError().message();        -> ASSERT_EXPECTED(X) << CTX;
  EXPECT_TRUE(bool(X)) << (X ? "" : X.takeError().message());     -> EXPECT_EXPECTED(X);
  ASSERT_FALSE(static_cast<bool>(E)) << E.message();               -> ASSERT_NO_ERROR(E);
and, where the nearest declaration of the name above is `Expected<...> X` or
`Error E`, the same checks without a message:
  ASSERT_TRUE(static_cast<bool>(X));    (X an Expected)            -> ASSERT_EXPECTED(X);
  EXPECT_FALSE(static_cast<bool>(E));   (E an Error)               -> EXPECT_NO_ERROR(E);
(the same for EXPECT_ and with or without static_cast/bool()). Adds
`#include "ExpectedAssert.h"` where it rewrote something. The compiler checks
the guesses: ASSERT_EXPECTED does not compile on an Error, nor ASSERT_NO_ERROR
on an Expected. Idempotent: a second run changes nothing. Run clang-format-14
-i on the files it lists afterwards.
"""
import os
import re
import sys

NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# The condition of the check: X, static_cast<bool>(X) or bool(X).
COND = r"(?:static_cast<bool>\(\s*(?P<a>{n})\s*\)|bool\(\s*(?P<b>{n})\s*\)|(?P<c>{n}))".format(n=NAME)
CHECK = r"\b(?P<kind>ASSERT|EXPECT)_(?P<sense>TRUE|FALSE)\(\s*" + COND + r"\s*\)"

# ... << [CTX <<] X.takeError().message()   or   << (X ? "" : X.takeError().message())
WITH_TAKE = re.compile(
    CHECK + r"(?P<ctx>(?:\s*<<\s*(?:[^;<]|<(?!<))+?)*?)\s*<<\s*"
    r"(?:\(\s*(?P=a)?(?P=b)?(?P=c)?\s*\?\s*\"\"\s*:\s*)?"
    r"(?P<x>" + NAME + r")\.takeError\(\)\.message\(\)\s*\)?(?=\s*;)")
# ... << E.message()
WITH_MESSAGE = re.compile(CHECK + r"\s*<<\s*(?P<x>" + NAME + r")\.message\(\)(?=\s*;)")
# No message at all (or a context that does not name the error).
BARE = re.compile(CHECK + r"(?=\s*(?:;|<<))")


def name_of(m):
    return m.group("a") or m.group("b") or m.group("c")


def trim_context(ctx):
    """CTX << ": " -> CTX: the macro puts the error message first."""
    parts = [p.strip() for p in re.split(r"<<", ctx) if p.strip()]
    if parts and re.fullmatch(r'"[^"]*"', parts[-1]):
        text = parts[-1][1:-1].rstrip()
        text = text[:-1].rstrip() if text.endswith(":") else text
        parts[-1] = '"%s"' % text if text else ""
        parts = [p for p in parts if p]
    return "".join(" << " + p for p in parts)


def declared_type(text, pos, name):
    """'Expected' or 'Error' when the nearest declaration of name above pos
    has that type, else None."""
    decl = re.compile(r"(?:\b(Expected)\s*<|\b(Error)\s+" + name + r"\b)")
    best = None
    for m in re.finditer(r"\b(?:const\s+)?(Expected\s*<[^;{}]*?>|Error|auto|[A-Za-z_:][A-Za-z0-9_:<>,]*)[\s&*]+" + name +
                         r"\s*(?:=|\(|\{|;|,|\))", text[:pos]):
        best = m
    if not best:
        return None
    t = best.group(1)
    if t.startswith("Expected"):
        return "Expected"
    if t == "Error":
        return "Error"
    return None


def rewrite(text):
    count = 0

    def with_take(m):
        nonlocal count
        x = name_of(m)
        if m.group("x") != x or m.group("sense") != "TRUE":
            return m.group(0)
        count += 1
        return "%s_EXPECTED(%s)%s" % (m.group("kind"), x, trim_context(m.group("ctx") or ""))

    text = WITH_TAKE.sub(with_take, text)

    def with_message(m):
        nonlocal count
        x = name_of(m)
        if m.group("x") != x or m.group("sense") != "FALSE":
            return m.group(0)
        count += 1
        return "%s_NO_ERROR(%s)" % (m.group("kind"), x)

    text = WITH_MESSAGE.sub(with_message, text)

    out, last = [], 0
    for m in BARE.finditer(text):
        x = name_of(m)
        t = declared_type(text, m.start(), x)
        if m.group("sense") == "TRUE" and t == "Expected":
            new = "%s_EXPECTED(%s)" % (m.group("kind"), x)
        elif m.group("sense") == "FALSE" and t == "Error":
            new = "%s_NO_ERROR(%s)" % (m.group("kind"), x)
        else:
            continue
        out.append(text[last:m.start()])
        out.append(new)
        last = m.end()
        count += 1
    out.append(text[last:])
    return "".join(out), count


def add_include(text):
    if '#include "ExpectedAssert.h"' in text:
        return text
    lines = text.split("\n")
    includes = [i for i, l in enumerate(lines) if l.startswith("#include ")]
    local = [i for i in includes if re.match(r'#include "(?!onnx-partition/)', lines[i])]
    if local:  # into the block of local headers
        lines.insert(local[-1] + 1, '#include "ExpectedAssert.h"')
    elif includes:  # a block of its own before the first include
        lines[includes[0]:includes[0]] = ['#include "ExpectedAssert.h"', ""]
    else:
        return text
    return "\n".join(lines)


def files(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                for n in sorted(names):
                    if n.endswith((".cpp", ".h")):
                        yield os.path.join(root, n)
        else:
            yield a


def main():
    if len(sys.argv) < 2:
        print("usage: use_expected_asserts.py FILE_OR_FOLDER...", file=sys.stderr)
        return 2
    total = 0
    for path in files(sys.argv[1:]):
        if path.endswith("ExpectedAssert.h"):
            continue
        with open(path) as f:
            text = f.read()
        new, n = rewrite(text)
        if n:
            new = add_include(new)
            with open(path, "w") as f:
                f.write(new)
            print("%s: %d" % (path, n))
            total += n
    print("rewritten: %d" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
