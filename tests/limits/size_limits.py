#!/usr/bin/python3
"""Input size limits (issue #18 item 5; field-review.md E9).

1. The largest spec the input schema accepts (every bounded list and map at
   its maxItems/maxProperties) builds, so every generated document passes
   nemoc's own output validation: the input limits match what the output
   allows (before, 20,000 imagePullSecrets took 8 s and 956 MB and were then
   refused by output validation).
2. One item beyond each limit is a located input error (file:line:column of
   the list), exit 1.

How cost grows with size (CPU time and peak memory at n and 4n targets) is a
measurement, so it lives in the bench: bench/size_growth.py, a row of
bench/run --quick (issue #39: no timing assertion in a functional test).

Usage: size_limits.py <nemoc> <source dir>
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import require_yaml  # noqa: E402
from size_limit_specs import LIMITS, BASE, at_max, with_targets  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def run(spec, tmp, tag):
    path = os.path.join(tmp, tag + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    out = os.path.join(tmp, "out-" + tag)
    proc = subprocess.run([NEMOC, "build", "--quiet", "-j", "1", "--out", out, path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc.returncode, proc.stderr.decode(errors="replace"), path


failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


with tempfile.TemporaryDirectory(prefix="nemoc-limits-") as tmp:
    # 1. Everything at its maximum builds (and so validates).
    code, err, _ = run(at_max(with_targets(BASE, 4)), tmp, "max")
    if code != 0:
        fail("the largest spec the schema accepts does not build:\n" + err[:3000])
    else:
        print("max spec: built")

    # 2. One beyond each limit: a located input error.
    for name, (limit, fill) in LIMITS.items():
        s = at_max(BASE, skip=name)
        fill(s, limit + 1)
        code, err, path = run(s, tmp, "over-" + name.replace(".", "-"))
        located = any(line.startswith(path + ":") and "error:" in line
                      and ("at most" in line or "more than" in line or "no more" in line)
                      for line in err.splitlines())
        if code != 1 or not located:
            fail("%s at %d items: exit %d, expected a located 'at most' error:\n%s"
                 % (name, limit + 1, code, err[:1500]))
        else:
            print("%s: %d items refused at the input" % (name, limit + 1))

sys.exit(1 if failures else 0)
