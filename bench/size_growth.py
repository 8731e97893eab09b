#!/usr/bin/env python3
"""How a build's cost grows with the spec (field-review.md E9), a row of bench/run --quick.

Builds the spec with every bounded list at its maximum (tests/lib/size_limit_specs.py)
at n and 4n targets, twice each, and prints the lower CPU time and peak RSS of each.
Cost is linear when 4n costs at most 5x n (6x under AddressSanitizer, whose quarantine
grows with the heap); the exit status says whether the bound holds, so the bench table
shows a regression. This measured in tests/limits/size_limits.py until issue #39 moved
every timing bound out of the functional tests.

Usage: size_growth.py <nemoc> [n]     (n targets, default 8)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from nemoc_specs import require_yaml  # noqa: E402
from size_limit_specs import BASE, at_max, with_targets  # noqa: E402

yaml = require_yaml()


def measured(nemoc, spec, tmp, tag):
    """CPU seconds and peak RSS (KiB) of one build, through wait4."""
    path = os.path.join(tmp, tag + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    out = os.path.join(tmp, "out-" + tag)
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        errors = os.open(path + ".stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(devnull, 1)
        os.dup2(errors, 2)
        os.execv(nemoc, [nemoc, "build", "--quiet", "-j", "1", "--out", out, path])
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        with open(path + ".stderr", errors="replace") as f:
            sys.exit("%s: build failed (exit %d):\n%s" % (tag, os.waitstatus_to_exitcode(status), f.read()[-3000:]))
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    nemoc = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with tempfile.TemporaryDirectory(prefix="nemoc-growth-") as tmp:
        # The lower of two runs each: one run's CPU time moves with the machine's load.
        cpu1, rss1 = min(measured(nemoc, at_max(with_targets(BASE, n)), tmp, "n-%d" % i) for i in range(2))
        cpu4, rss4 = min(measured(nemoc, at_max(with_targets(BASE, 4 * n)), tmp, "4n-%d" % i) for i in range(2))
    per_target = (cpu4 - cpu1) / (3 * n)
    bound = 6 if os.environ.get("ASAN_OPTIONS") else 5
    problems = []
    if per_target * n < 0.5 * cpu1:
        problems.append("n=%d too small: per-target cost %.1f ms x %d < half of %.2f s" % (n, per_target * 1000, n, cpu1))
    if cpu4 > bound * cpu1:
        problems.append("CPU grows faster than linearly (bound %dx)" % bound)
    if rss4 > 5 * rss1:
        problems.append("peak memory grows faster than linearly (bound 5x)")
    print("%d -> %d targets at every list maximum: CPU %.2f -> %.2f s (%.2fx), peak RSS %d -> %d MiB (%.2fx), "
          "%.1f ms CPU per target%s" % (n, 4 * n, cpu1, cpu4, cpu4 / cpu1, rss1 // 1024, rss4 // 1024, rss4 / rss1,
                                         per_target * 1000, "; " + "; ".join(problems) if problems else ""))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
