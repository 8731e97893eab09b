#!/usr/bin/python3
"""A stage's Job run for a state that is already complete does nothing (issue #41 item 1, F15).

A revert brings back the manifests of an earlier state; the earlier Jobs were pruned when the
state moved on, so Argo CD / Flux create them again (a Job is never "already there": gitops-engine
v3.5.1 pkg/sync/sync_context.go creates every missing object; kustomize-controller v1.9.4 applies
every object of the tree). Their state directories are still on the volume (nemoc never deletes
data), so running again would rebuild an engine, a conversion or a prepared set for hours -- and
NeMo 2's HF export refuses an existing output directory. pod.runOnce writes
`<state directory>.nemoc-complete` after the program exits 0 and exits at once when it exists.

This test runs the emitted shell itself (bash, the container's exact `command` and `args`), with
the volume paths moved under a temporary directory and a stand-in program in front of the real
argv, through the life of a Job:

  1. first run: the program runs once with its argv unchanged, the directories exist, the marker
     is written beside the state directory (never inside it);
  2. the Job re-created for the same state (a revert): exit 0, the program does not run;
  3. a new state whose program fails: the failure's status is the Job's, no marker, scratch files
     removed; its retry succeeds and writes the marker;
  4. SIGTERM (the Job deleted or preempted while running): the program itself receives SIGTERM
     (bash forwards it), the Job fails, no marker;
  5. files a killed try left (stale, scratch) are removed before the program runs.

And over every committed tree (out/, tests/golden): every non-training Job runs through
runOnce, and its marker is `<directory>.nemoc-complete` for a directory SUMMARY.md's "State
directories" lists for that stage (or an ancestor of it).

usage: run_once.py <repo>
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import mappings  # noqa: E402

SUFFIX = ".nemoc-complete"
STAND_IN = r'''
import json, os, signal, sys, time
log, mode = os.environ["RUN_ONCE_LOG"], os.environ.get("RUN_ONCE_MODE", "ok")
def record(event):
    with open(log, "a") as f:
        f.write(json.dumps(event) + "\n")
record({"argv": sys.argv[1:], "present": [p for p in json.loads(os.environ.get("RUN_ONCE_WATCH", "[]")) if os.path.exists(p)]})
for p in json.loads(os.environ.get("RUN_ONCE_CREATE", "[]")):
    open(p, "w").close()
if mode == "fail":
    sys.exit(3)
if mode == "hang":
    def term(signum, frame):
        record({"signal": signum})
        sys.exit(143)
    signal.signal(signal.SIGTERM, term)
    open(os.environ["RUN_ONCE_READY"], "w").close()
    time.sleep(60)
    sys.exit(0)
'''


def containers(doc):
    """Every container under doc: a mapping with an image and a command list."""
    return [m for m in mappings(doc) if isinstance(m.get("command"), list) and "image" in m]


def is_run_once(c):
    cmd = c.get("command", [])
    return len(cmd) == 4 and cmd[:2] == ["bash", "-c"] and "marker=$1" in cmd[2]


def layout(script):
    """(dirs, stale, scratch) counts from the script: mkdir "${@:2:D}", stale/scratch slices."""
    d = int(re.search(r'mkdir -p -- "\$\{@:2:(\d+)\}"', script).group(1))
    s = re.search(r'stale=\("\$\{@:\d+:(\d+)\}"\)', script)
    c = re.search(r'scratch=\("\$\{@:\d+:(\d+)\}"\)', script)
    shift = int(re.search(r"^shift (\d+)$", script, re.M).group(1))
    s, c = int(s.group(1)) if s else 0, int(c.group(1)) if c else 0
    assert shift == 1 + d + s + c, script
    return d, s, c


def summary_dirs(tree):
    text = open(os.path.join(tree, "SUMMARY.md")).read()
    if "## State directories" not in text:
        return {}
    section = text.split("## State directories", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([^`]+)` \| `([^`]+)` \|$", section, re.M)}


def committed_jobs(repo):
    """(tree, stage dir, file, container) of every stage container in the committed trees."""
    found = []
    for top in ("out", "tests/golden"):
        for dirpath, _, files in os.walk(os.path.join(repo, top)):
            if "_clusters" in dirpath or "/_" in dirpath:
                continue
            for f in sorted(files):
                if not f.endswith(".yaml") or f == "kustomization.yaml":
                    continue
                stage = os.path.basename(dirpath)
                tree = os.path.dirname(dirpath)
                if not os.path.exists(os.path.join(tree, "SUMMARY.md")):
                    continue
                for doc in yaml.safe_load_all(open(os.path.join(dirpath, f))):
                    if isinstance(doc, dict) and doc.get("kind") in ("Job", "JobSet"):
                        for c in containers(doc):
                            found.append((tree, stage, os.path.join(dirpath, f), c))
    return found


# Stages that make a state once; training resumes by itself (NeMo's exp_manager), nccl-test has no
# state, serve is a Deployment.
RUN_ONCE_STAGES = ("20-data-prep", "25-import-model", "35-merge-lora", "40-evaluate", "50-convert", "60-tensorrt-llm")


def check_committed(repo, failures):
    variants = {}
    jobs = committed_jobs(repo)
    for tree, stage, path, c in jobs:
        rel = os.path.relpath(path, repo)
        if not stage.endswith(RUN_ONCE_STAGES):
            continue
        if c.get("name", "").endswith("download"):
            continue  # convert's hub download: resumable by huggingface_hub, not a state
        if not is_run_once(c):
            failures.append(f"{rel}: container {c.get('name')} of a run-once stage does not run through pod.runOnce")
            continue
        marker = c["args"][0]
        if not marker.endswith(SUFFIX):
            failures.append(f"{rel}: marker {marker} does not end in {SUFFIX}")
            continue
        state = marker[:-len(SUFFIX)]
        listed = summary_dirs(tree).get(stage)
        if listed is None or not (listed == state or listed.startswith(state + "/")):
            failures.append(f"{rel}: marker {marker} is not beside the state directory SUMMARY.md lists ({listed})")
        d, s, k = layout(c["command"][2])
        for p in c["args"][1:1 + d + s + k]:
            if p == marker or p.startswith(marker):
                failures.append(f"{rel}: {p} is the marker or under it")
        variants.setdefault(c["command"][2], (rel, c))
    return variants, len(jobs)


class Run:
    def __init__(self, script, args, root, tag):
        self.script, self.root, self.tag = script, root, tag
        self.d, self.s, self.c = layout(script)
        n = 1 + self.d + self.s + self.c
        self.paths = [self.moved(p) for p in args[:n]]
        self.argv = list(args[n:])
        self.log = os.path.join(root, "log")
        self.stand_in = os.path.join(root, "stand_in.py")
        with open(self.stand_in, "w") as f:
            f.write(STAND_IN)

    def moved(self, p):
        assert p.startswith("/"), p
        return os.path.join(self.root, "vol") + p

    @property
    def marker(self):
        return self.paths[0]

    def dirs(self):
        return self.paths[1:1 + self.d]

    def stale(self):
        return self.paths[1 + self.d:1 + self.d + self.s]

    def scratch(self):
        return self.paths[1 + self.d + self.s:]

    def events(self):
        if not os.path.exists(self.log):
            return []
        import json
        return [json.loads(line) for line in open(self.log)]

    def start(self, mode, create=(), watch=()):
        import json
        if os.path.exists(self.log):
            os.remove(self.log)
        env = dict(os.environ, RUN_ONCE_LOG=self.log, RUN_ONCE_MODE=mode, RUN_ONCE_READY=self.log + ".ready",
                   RUN_ONCE_CREATE=json.dumps(list(create)), RUN_ONCE_WATCH=json.dumps(list(watch)))
        cmd = ["bash", "-c", self.script, "nemoc"] + self.paths + [sys.executable, self.stand_in] + self.argv
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, mode, create=(), watch=()):
        p = self.start(mode, create, watch)
        out, _ = p.communicate(timeout=60)
        return p.returncode, out


def scenario(script, rel, c, failures):
    with tempfile.TemporaryDirectory(prefix="nemoc-run-once-") as root:
        r = Run(script, c["args"], root, rel)

        def fail(msg):
            failures.append(f"{rel} ({c['name']}): {msg}")

        # 5 before 1: files a killed try left behind are removed before the program runs.
        for p in r.stale() + r.scratch():
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").close()
        # 1. first run
        code, out = r.run("ok", create=r.scratch(), watch=r.stale() + r.scratch())
        ev = r.events()
        if code != 0:
            fail(f"first run exited {code}: {out}")
        if len(ev) != 1 or ev[0]["argv"] != r.argv:
            fail(f"first run: the program ran {len(ev)} times / with argv {ev[0]['argv'] if ev else None}, want once with {r.argv}")
        elif ev[0]["present"]:
            fail(f"stale or scratch files left by a killed try were still there when the program started: {ev[0]['present']}")
        for d in r.dirs():
            if not os.path.isdir(d):
                fail(f"directory {d} was not created")
        if not os.path.isfile(r.marker):
            fail("no marker after a successful run")
        for p in r.scratch():
            if os.path.exists(p):
                fail(f"scratch file {p} is still there after the run")
        for d in r.dirs():
            if os.path.commonpath([d, r.marker]) == d:
                fail(f"the marker {r.marker} is inside {d}")
        # 2. re-created for the same state: nothing runs
        code, out = r.run("fail")
        if code != 0 or r.events():
            fail(f"a Job re-created for a complete state ran the program again (exit {code}, {len(r.events())} runs)")
        if "complete" not in out:
            fail(f"a skipped run does not say why: {out!r}")
        # 3. a new state whose program fails, then its retry
        if os.path.exists(r.marker):
            os.remove(r.marker)
        code, out = r.run("fail", create=r.scratch())
        if code != 3:
            fail(f"a failing program's status 3 became the Job's {code}")
        if os.path.exists(r.marker):
            fail("a failed run wrote the marker")
        for p in r.scratch():
            if os.path.exists(p):
                fail(f"scratch file {p} is still there after a failed run")
        code, out = r.run("ok")
        if code != 0 or len(r.events()) != 1 or not os.path.isfile(r.marker):
            fail(f"the retry after a failure did not run once and complete (exit {code}, {len(r.events())} runs)")
        # 4. SIGTERM while running
        if os.path.exists(r.marker):
            os.remove(r.marker)
        p = r.start("hang")
        ready = r.log + ".ready"
        deadline = time.monotonic() + 30
        while not os.path.exists(ready) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.02)
        os.remove(ready) if os.path.exists(ready) else fail("the program never started")
        p.send_signal(signal.SIGTERM)
        try:
            p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            fail("bash did not end after SIGTERM")
        if not any(e.get("signal") == signal.SIGTERM for e in r.events()):
            fail("SIGTERM to the container's process did not reach the program")
        if p.returncode == 0:
            fail("a Job terminated while running exited 0")
        if os.path.exists(r.marker):
            fail("a terminated run wrote the marker")


def main():
    repo = sys.argv[1]
    failures = []
    variants, jobs = check_committed(repo, failures)
    if not variants:
        failures.append("no run-once container found in the committed trees")
    for script, (rel, c) in sorted(variants.items()):
        scenario(script, rel, c, failures)
    for f in failures:
        print("FAIL", f)
    print(f"run_once: {jobs} stage containers checked, {len(variants)} distinct run-once scripts run through "
          f"5 scenarios, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
