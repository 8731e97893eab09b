#!/usr/bin/python3
"""The catalogue in the schema editors read (issue #19 item 3), against the tables it comes from
and against what nemoc itself accepts.

- schemas/project.schema.json is what scripts/update-schema-catalogue makes from libsonnet/
  models.json, accelerators.json, the runtimes and the profiles (--check), and a change to a
  table shows up there (a preset added to a copy of models.json);
- `nemoc schema` prints it; every example and test spec is valid under it as a JSON Schema
  validator (python3-jsonschema, draft 7, with the editor-only per-profile rules) reads it;
- for every built-in profile and every profile-owned target field, the schema flags the field
  exactly when nemoc refuses it (spec.wrong-profile); an unknown eks-efa instance type and a
  missing one are flagged by both, a known one by neither; an unknown preset is refused by both;
- `nemoc explain` lists every preset, runtime, GPU and eks-efa instance type with its description.

Usage: catalogue.py <nemoc> <source dir>
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from nemoc_specs import all_specs, missing, require_yaml  # noqa: E402

yaml = require_yaml()
try:
    import jsonschema
except ImportError:
    missing("python3-jsonschema")
if not shutil.which("jsonnet"):
    missing("jsonnet")
NEMOC, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ENV = dict(os.environ, NEMOC_DATA_DIR=SRC)
UPDATE = os.path.join(SRC, "scripts", "update-schema-catalogue")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def nemoc(*args, cwd=None):
    return subprocess.run([NEMOC] + list(args), capture_output=True, text=True, env=ENV, cwd=cwd)


def profiles():
    names = sorted(f[:-len(".libsonnet")] for f in os.listdir(os.path.join(SRC, "profiles")))
    check(names == sorted(TARGETS), "the test has no minimal target for the profiles %s" % sorted(set(names) ^ set(TARGETS)))
    expr = "{" + ", ".join("'%s': local x = import '%s.libsonnet'; {fields: std.objectFields(x.options), "
                           "instances: std.get(x, 'instances', {})}" % (p, p)
                           for p in names) + "}"
    # nemoc's libraries import each other as 'nemoc/<path>': the jsonnet CLI
    # finds them through a directory whose nemoc/ is libsonnet/.
    with tempfile.TemporaryDirectory(prefix="nemoc-jpath-") as namespace:
        os.symlink(os.path.join(SRC, "libsonnet"), os.path.join(namespace, "nemoc"))
        out = subprocess.run(["jsonnet", "-J", os.path.join(SRC, "libsonnet"), "-J", os.path.join(SRC, "profiles"),
                              "-J", namespace, "-e", expr], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


# A minimal valid target per profile (the fields a profile needs to compile).
TARGETS = {
    "vanilla-k8s": {"name": "t", "profile": "vanilla-k8s"},
    "eks-efa": {"name": "t", "profile": "eks-efa", "instanceType": "p5.48xlarge",
                "efa": {"image": {"repository": "registry.example/nemo-efa", "tag": "25.02"}, "awsOfiNccl": "1.13.2"}},
    "gke-a4": {"name": "t", "profile": "gke-a4", "kueue": {"clusterQueue": "a4", "covers": ["nvidia.com/gpu"]}},
}
# A plausible value of every profile-owned target field.
VALUES = {
    "rdma": {"count": 4},
    "instanceType": "p5.48xlarge",
    "iamRoleArn": "arn:aws:iam::123456789012:role/nemo",
    "efa": {"image": {"repository": "registry.example/nemo-efa", "tag": "25.02"}, "awsOfiNccl": "1.13.2"},
    "gcpServiceAccount": "nemo@my-project.iam.gserviceaccount.com",
    "hostNetwork": True,
}
BASE = {
    "apiVersion": "nemoc.dev/v1alpha1", "kind": "Project", "metadata": {"name": "cat"},
    "spec": {
        "namespace": "cat", "image": {"repository": "nvcr.io/nvidia/nemo", "tag": "25.02"},
        "model": {"preset": "llama3.1-8b", "source": {"hfTokenSecret": "hf-token"}},
        "storage": {"results": {"pvc": {"claimName": "results"}}},
        "stages": {"train": {"mode": "pretrain", "nodes": 1, "gpusPerNode": 8, "parallelism": {"tensor": 2},
                             "batch": {"micro": 1, "global": 32}, "maxSteps": 10, "data": {"mock": True}}},
        "targets": [],
    },
}


def spec_with(target):
    spec = copy.deepcopy(BASE)
    spec["spec"]["targets"] = [target]
    return spec


def nemoc_codes(spec, tmp):
    path = os.path.join(tmp, "spec.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(spec, f, sort_keys=False)
    r = nemoc("validate", "-o", "json", path)
    report = json.loads(r.stdout)
    return r.returncode, [(d["code"], d.get("pointer", ""), d["message"]) for d in report["diagnostics"]
                          if d["severity"] == "error"]


def main():
    schema_path = os.path.join(SRC, "schemas", "project.schema.json")
    schema = json.load(open(schema_path))
    # The schema is what the tables make.
    r = subprocess.run([UPDATE, "--check"], capture_output=True, text=True)
    check(r.returncode == 0, "the committed catalogue is out of date: " + r.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for part in ("libsonnet", "profiles", "schemas", "scripts"):
            shutil.copytree(os.path.join(SRC, part), os.path.join(tmp, part))
        models_path = os.path.join(tmp, "libsonnet", "models.json")
        models = json.load(open(models_path))
        models["models"]["llama9-1b"] = models["models"]["llama2-7b"]
        json.dump(models, open(models_path, "w"))
        r = subprocess.run([UPDATE, "--check", "--root", tmp], capture_output=True, text=True)
        check(r.returncode == 1, "--check did not notice a preset added to models.json")
        subprocess.run([UPDATE, "--root", tmp], check=True)
        changed = json.load(open(os.path.join(tmp, "schemas", "project.schema.json")))
        check("llama9-1b" in changed["definitions"]["model"]["properties"]["preset"]["enum"],
              "a preset added to models.json is not in the regenerated schema")
        # A stage's spec schema is its description's (libsonnet/stages/<key>.stage.json):
        # a field added there reaches spec.stages.<key>, and a new description a new key.
        stage_path = os.path.join(tmp, "libsonnet", "stages", "evaluate.stage.json")
        evaluate = json.load(open(stage_path))
        evaluate["schema"]["properties"]["limit"] = {"description": "At most this many examples per task.",
                                                     "type": "integer", "minimum": 1}
        json.dump(evaluate, open(stage_path, "w"))
        json.dump({"description": "d", "dir": "45-judge", "library": "judge.libsonnet", "present": "named",
                   "schema": {"description": "j", "type": "object"}},
                  open(os.path.join(tmp, "libsonnet", "stages", "judge.stage.json"), "w"))
        r = subprocess.run([UPDATE, "--check", "--root", tmp], capture_output=True, text=True)
        check(r.returncode == 1, "--check did not notice a stage description's schema change")
        subprocess.run([UPDATE, "--root", tmp], check=True)
        stages = json.load(open(os.path.join(tmp, "schemas", "project.schema.json")))["definitions"]["stages"]
        check("limit" in stages["properties"]["evaluate"]["properties"],
              "a field added to evaluate.stage.json is not in spec.stages.evaluate")
        check(list(stages["properties"]).index("judge") == list(stages["properties"]).index("evaluate") + 1,
              "spec.stages does not list a new stage in pipeline order: %s" % list(stages["properties"]))
        check("judge (45-judge)" in stages["description"], "spec.stages' description lacks the new stage")
        # A GitOps engine is its library and its description (libsonnet/engines/<name>.json):
        # a third one joins spec.gitops.engines and brings spec.gitops.<name>.
        engines_dir = os.path.join(tmp, "libsonnet", "engines")
        json.dump({"title": "Fleet", "summary": "GitRepo per target", "clusterBootstrapNote": "", "editWhileRunning": "",
                   "replacedWorkloadNote": "", "schema": {"type": "object", "default": {}}},
                  open(os.path.join(engines_dir, "fleet.json"), "w"))
        open(os.path.join(engines_dir, "fleet.libsonnet"), "w").write("(import 'nemoc/engine.libsonnet') + { name:: 'fleet' }\n")
        subprocess.run([UPDATE, "--root", tmp], check=True)
        gitops = json.load(open(os.path.join(tmp, "schemas", "project.schema.json")))["definitions"]["gitops"]["properties"]
        check(gitops["engines"]["items"]["enum"] == ["argocd", "fleet", "flux"] and gitops["engines"]["maxItems"] == 3
              and "fleet (GitRepo per target)" in gitops["engines"]["items"]["description"]
              and gitops["fleet"] == {"type": "object", "default": {}},
              "an engine added to libsonnet/engines/ is not in spec.gitops: %s" % gitops["engines"])
    # Every built-in stage description meets its contract (schemas/contracts/stage.schema.json);
    # nemoc checks a --jpath directory's at run time, located (tests/extending_test.cc).
    contract = jsonschema.Draft7Validator(json.load(open(os.path.join(SRC, "schemas", "contracts", "stage.schema.json"))))
    stage_dir = os.path.join(SRC, "libsonnet", "stages")
    described = [f for f in sorted(os.listdir(stage_dir)) if f.endswith(".stage.json")]
    check(len(described) >= 12, "fewer stage descriptions than the built-in stages: %s" % described)
    for f in described:
        errors = [e.message for e in contract.iter_errors(json.load(open(os.path.join(stage_dir, f))))]
        check(not errors, "libsonnet/stages/%s breaks schemas/contracts/stage.schema.json: %s" % (f, errors[:3]))
    # Likewise every built-in GitOps engine's description (schemas/contracts/engine.schema.json),
    # and spec.gitops holds exactly them: the enum, its bound, each one's settings.
    contract = jsonschema.Draft7Validator(json.load(open(os.path.join(SRC, "schemas", "contracts", "engine.schema.json"))))
    engine_dir = os.path.join(SRC, "libsonnet", "engines")
    engines = sorted(f[:-len(".json")] for f in os.listdir(engine_dir) if f.endswith(".json"))
    check(engines == ["argocd", "flux"], "the built-in engines are not Argo CD and Flux: %s" % engines)
    gitops = schema["definitions"]["gitops"]["properties"]
    check(gitops["engines"]["items"]["enum"] == engines and gitops["engines"]["maxItems"] == len(engines),
          "spec.gitops.engines does not list the engine descriptions: %s" % gitops["engines"])
    for name in engines:
        about = json.load(open(os.path.join(engine_dir, name + ".json")))
        errors = [e.message for e in contract.iter_errors(about)]
        check(not errors, "libsonnet/engines/%s.json breaks schemas/contracts/engine.schema.json: %s" % (name, errors[:3]))
        check(gitops.get(name) == about.get("schema"), "spec.gitops.%s is not the schema of engines/%s.json" % (name, name))
    check(nemoc("schema").stdout == open(schema_path).read(), "nemoc schema does not print the schema")

    validator = jsonschema.Draft7Validator(schema)
    for path in all_specs(SRC):
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(open(path)))]
        check(not errors, "%s is invalid under the editor schema: %s" % (os.path.basename(path), errors[:3]))

    table = profiles()
    owner = {field: p for p, facts in table.items() for field in facts["fields"]}
    check(set(owner) == set(VALUES), "the test has no value for the profile-owned fields %s" %
          sorted(set(owner) ^ set(VALUES)))
    with tempfile.TemporaryDirectory() as tmp:
        for profile, target in TARGETS.items():
            spec = spec_with(target)
            check(not list(validator.iter_errors(spec)), "the minimal %s spec is flagged by the schema: %s" %
                  (profile, [e.message for e in validator.iter_errors(spec)]))
            code, errors = nemoc_codes(spec, tmp)
            check(code == 0, "nemoc refuses the minimal %s spec: %s" % (profile, errors))
            for field, value in VALUES.items():
                t = dict(target, **{field: value})
                flagged = bool(list(validator.iter_errors(spec_with(t))))
                _, errors = nemoc_codes(spec_with(t), tmp)
                refused = any(c == "spec.wrong-profile" and p == "/spec/targets/0/" + field for c, p, _ in errors)
                check(flagged == (owner[field] != profile),
                      "schema: %s on %s %s" % (field, profile, "flagged" if flagged else "not flagged"))
                check(refused == (owner[field] != profile),
                      "nemoc: %s on %s %s" % (field, profile, "refused" if refused else "accepted"))
        eks = TARGETS["eks-efa"]
        check(list(validator.iter_errors(spec_with(dict(eks, instanceType="p9.48xlarge")))),
              "the schema accepts an unknown instance type")
        _, errors = nemoc_codes(spec_with(dict(eks, instanceType="p9.48xlarge")), tmp)
        check(errors, "nemoc accepts an unknown instance type")
        without = {k: v for k, v in eks.items() if k != "instanceType"}
        check(list(validator.iter_errors(spec_with(without))), "the schema accepts eks-efa without instanceType")
        _, errors = nemoc_codes(spec_with(without), tmp)
        check(errors, "nemoc accepts eks-efa without instanceType")
        for instance in table["eks-efa"]["instances"]:
            spec = spec_with(dict(eks, instanceType=instance))
            check(not list(validator.iter_errors(spec)), "the schema flags instance type " + instance)
        bad = spec_with(TARGETS["vanilla-k8s"])
        bad["spec"]["model"]["preset"] = "llama3.1-8c"
        check(list(validator.iter_errors(bad)), "the schema accepts an unknown preset")
        _, errors = nemoc_codes(bad, tmp)
        check(any(c == "spec.not-allowed" and p == "/spec/model/preset" for c, p, _ in errors),
              "nemoc does not refuse an unknown preset at spec.model.preset: %s" % errors)

    # explain lists what the schema enumerates, with descriptions.
    defs = schema["definitions"]
    for path, node in (("spec.model.preset", defs["model"]["properties"]["preset"]),
                       ("spec.targets.runtime", defs["target"]["properties"]["runtime"]),
                       ("spec.targets.gpu", defs["target"]["properties"]["gpu"])):
        text = " ".join(nemoc("explain", path).stdout.split())
        for value, description in zip(node["enum"], node["enumDescriptions"]):
            check(value + " " + " ".join(description.split()) in text, "explain %s lacks %s: %s" % (path, value, description))
    text = " ".join(nemoc("explain", "spec.targets.instanceType").stdout.split())
    for instance in table["eks-efa"]["instances"]:
        check(" " + instance + " 8 ×" in text, "explain spec.targets.instanceType lacks " + instance)
    builtin = sorted(f[:-len('.libsonnet')] for f in os.listdir(os.path.join(SRC, 'profiles')) if f.endswith('.libsonnet'))
    check("EXAMPLES: " + ", ".join(builtin) in nemoc("explain", "spec.targets.profile").stdout,
          "explain spec.targets.profile does not list the built-in profiles")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    print("catalogue: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
