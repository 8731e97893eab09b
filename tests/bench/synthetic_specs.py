#!/usr/bin/python3
"""bench/run's synthetic spec set builds with the current compiler.

bench/gen_specs.py writes the specs every benchmark row is measured on; when a rule or a
schema change makes them invalid, bench/run dies at its first step (as it did from session 5's
kueue.clusterQueue until it was noticed). This test writes one spec of every target shape
(10 targets) and builds it: exit 0, no diagnostics.

Usage: synthetic_specs.py <nemoc> <source dir>
"""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import build  # noqa: E402

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
with tempfile.TemporaryDirectory(prefix="nemoc-bench-specs-") as tmp:
    specs = os.path.join(tmp, "specs")
    subprocess.run([sys.executable, os.path.join(SRC, "bench", "gen_specs.py"), "10", specs], check=True)
    files = sorted(glob.glob(os.path.join(specs, "*.yaml")))
    run = build(NEMOC, SRC, os.path.join(tmp, "out"), files)
    if run.returncode != 0 or run.stderr.strip():
        print(run.stderr, file=sys.stderr)
        print("bench/gen_specs.py's specs do not build: update it with the rule that refuses them", file=sys.stderr)
        sys.exit(1)
    print(f"{len(files)} synthetic spec(s) built")
