#!/usr/bin/python3
"""stages.train.restarts reaches every training runtime (B14), never dropped.

Builds examples/gpt-tp2-trainjob.yaml with restarts 5 (and once with 0) on one
target per runtime and checks what each workload API does with it:
  - jobset: spec.failurePolicy.maxRestarts (kubernetes-sigs/jobset v0.12.0
    api/jobset/v1alpha2/jobset_types.go:482), child Job backoffLimit 0;
  - indexed-job: backoffLimitPerIndex, maxFailedIndexes 0, podFailurePolicy
    Ignore on DisruptionTarget, podReplacementPolicy Failed (k8s.io/api
    v0.34.0 batch/v1/types.go:338-373,460); restarts 0 -> backoffLimit 0;
  - trainjob: runtimeRef to a namespaced TrainingRuntime in 00-base carrying
    failurePolicy.maxRestarts and a Job backoffLimit 0 (kubeflow/trainer
    v2.3.0: runtimePatches cannot carry a failurePolicy, trainjob_types.go:336);
  - pytorchjob: runPolicy.backoffLimit and torchrun --max-restarts.

Usage: restarts.py <nemoc> <source dir>
"""
import copy
import glob
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import build as nemoc_build, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
RUNTIMES = ["jobset", "indexed-job", "trainjob", "pytorchjob"]


def build(spec, out):
    path = os.path.join(out, "spec.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f)
    run = nemoc_build(NEMOC, SRC, os.path.join(out, "out"), [path])
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        sys.exit(1)
    objects = {}  # target -> [(relative path, object)]
    root = os.path.join(out, "out", spec["metadata"]["name"])
    for p in glob.glob(os.path.join(root, "*", "*", "*.yaml")):
        rel = os.path.relpath(p, root)
        target = rel.split(os.sep)[0]
        with open(p) as f:
            for doc in yaml.safe_load_all(f):
                if isinstance(doc, dict) and "kind" in doc:
                    objects.setdefault(target, []).append((rel, doc))
    return objects


def of_kind(objs, kind, stage="30-train"):
    return [(p, o) for p, o in objs if o["kind"] == kind and (stage is None or f"/{stage}/" in p)]


def check(objects, restarts, errors):
    def expect(cond, what):
        if not cond:
            errors.append(f"restarts {restarts}: {what}")

    for rt in RUNTIMES:
        objs = objects.get(f"t-{rt}", [])
        expect(objs, f"{rt}: nothing built")
        if rt == "jobset":
            for p, o in of_kind(objs, "JobSet"):
                expect(o["spec"].get("failurePolicy", {}).get("maxRestarts") == restarts,
                       f"{p}: failurePolicy {o['spec'].get('failurePolicy')}")
                for rj in o["spec"]["replicatedJobs"]:
                    expect(rj["template"]["spec"].get("backoffLimit") == 0, f"{p}: child Job backoffLimit")
            expect(len(of_kind(objs, "JobSet")) == 1, "jobset: one JobSet")
        elif rt == "indexed-job":
            jobs = of_kind(objs, "Job")
            expect(len(jobs) == 1, "indexed-job: one Job")
            for p, o in jobs:
                s = o["spec"]
                if restarts == 0:
                    expect(s.get("backoffLimit") == 0 and "backoffLimitPerIndex" not in s, f"{p}: {s.get('backoffLimit')}")
                    continue
                expect(s.get("backoffLimitPerIndex") == restarts, f"{p}: backoffLimitPerIndex {s.get('backoffLimitPerIndex')}")
                expect(s.get("maxFailedIndexes") == 0, f"{p}: maxFailedIndexes {s.get('maxFailedIndexes')}")
                expect("backoffLimit" not in s, f"{p}: backoffLimit set beside backoffLimitPerIndex")
                expect(s.get("podReplacementPolicy") == "Failed", f"{p}: podReplacementPolicy")
                rules = s.get("podFailurePolicy", {}).get("rules", [])
                expect(any(r.get("action") == "Ignore" and
                           any(c.get("type") == "DisruptionTarget" for c in r.get("onPodConditions", []))
                           for r in rules), f"{p}: no Ignore rule for DisruptionTarget")
                expect(s["template"]["spec"].get("restartPolicy") == "Never", f"{p}: restartPolicy")
        elif rt == "trainjob":
            tjs = of_kind(objs, "TrainJob")
            expect(len(tjs) == 1, "trainjob: one TrainJob")
            runtimes = {o["metadata"]["name"]: (p, o) for p, o in of_kind(objs, "TrainingRuntime", "00-base")}
            for p, o in tjs:
                ref = o["spec"]["runtimeRef"]
                expect(ref.get("kind") == "TrainingRuntime", f"{p}: runtimeRef kind {ref.get('kind')}")
                expect(ref.get("name") in runtimes, f"{p}: runtimeRef {ref.get('name')} not in 00-base")
                if ref.get("name") not in runtimes:
                    continue
                rp, r = runtimes[ref["name"]]
                expect(r["metadata"].get("namespace") == o["metadata"].get("namespace"), f"{rp}: namespace")
                tmpl = r["spec"]["template"]["spec"]
                expect(tmpl.get("failurePolicy", {}).get("maxRestarts") == restarts,
                       f"{rp}: failurePolicy {tmpl.get('failurePolicy')}")
                node = [j for j in tmpl["replicatedJobs"] if j["name"] == "node"]
                expect(node and node[0]["template"]["spec"].get("backoffLimit") == 0, f"{rp}: node Job backoffLimit")
                expect("torch" in r["spec"].get("mlPolicy", {}), f"{rp}: mlPolicy.torch")
        elif rt == "pytorchjob":
            pjs = of_kind(objs, "PyTorchJob")
            expect(len(pjs) == 1, "pytorchjob: one PyTorchJob")
            for p, o in pjs:
                expect(o["spec"]["runPolicy"].get("backoffLimit") == restarts, f"{p}: runPolicy.backoffLimit")
                args = o["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["args"]
                expect(f"--max-restarts={restarts}" in args, f"{p}: torchrun --max-restarts")


def main():
    with open(os.path.join(SRC, "examples", "gpt-tp2-trainjob.yaml")) as f:
        base = yaml.safe_load(f)
    template = base["spec"]["targets"][0]
    base["metadata"]["name"] = "restarts"
    base["spec"]["targets"] = [dict(copy.deepcopy(template), name=f"t-{rt}", runtime=rt) for rt in RUNTIMES]
    errors = []
    for restarts in (5, 0):
        base["spec"]["stages"]["train"]["restarts"] = restarts
        with tempfile.TemporaryDirectory(prefix="nemoc-restarts-") as out:
            check(build(base, out), restarts, errors)
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{len(RUNTIMES)} runtimes x 2 restart settings checked, {len(errors)} errors")
    return 1 if errors else 0


sys.exit(main())
