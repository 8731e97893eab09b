#!/usr/bin/python3
"""Triton's model repository declares what tensorrtllm_backend's templates declare (issue #14, A15).

Reads triton-inference-server/tensorrtllm_backend's all_models/inflight_batcher_llm/
{tensorrt_llm,preprocessing,postprocessing,ensemble}/config.pbtxt as copied unchanged into
../shared/upstream/tensorrtllm_backend/<tag>/ and checks:
  - nemoc's table libsonnet/triton_templates.json: every row's <tag>:<path>:<line> names the
    upstream line declaring it, and each model's inputs, outputs and parameter keys are exactly
    the template's;
  - every spec with a serve stage: the ConfigMap of the Triton model repository holds the
    four models; in each, every input/output of the template for the backend version of the
    image's tritonserver release is declared with the same data_type, dims, reshape and
    optional flag, every parameter key of the template is set, no ${...} placeholder is left;
  - the ensemble: every step names a model of the repository, maps only inputs/outputs that
    model declares, reads only ensemble inputs or earlier steps' outputs, and the ensemble's
    outputs are all produced; the Deployment mounts every file of the ConfigMap.

Usage: triton_templates.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pbtxt  # noqa: E402
from nemoc_specs import missing, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
UPSTREAM = os.path.join(SRC, "..", "shared", "upstream", "tensorrtllm_backend")
# NGC tritonserver release (the image tag's YY.MM) -> the tensorrtllm_backend release its
# -trtllm-python-py3 image ships (tensorrtllm_backend README support matrix).
BACKEND_OF_RELEASE = {"24.07": "v0.11.0", "25.01": "v0.17.0"}
MODELS = ["tensorrt_llm", "preprocessing", "postprocessing", "ensemble"]

if not os.path.isdir(UPSTREAM):
    missing(UPSTREAM, "%s missing: skipped" % UPSTREAM)

failures = []


def fail(msg):
    failures.append(msg)


def upstream_text(tag, model):
    with open(os.path.join(UPSTREAM, tag, model + ".config.pbtxt")) as f:
        return f.read()


_templates = {}


def template(tag, model):
    if (tag, model) not in _templates:
        _templates[(tag, model)] = pbtxt.parse(upstream_text(tag, model))
    return _templates[(tag, model)]


def tensors(message, kind):
    """{name: tensor message} of a model's input or output list."""
    return {pbtxt.one(t, "name"): t for t in pbtxt.all_of(message, kind)}


def shape(tensor):
    """(data_type, dims, reshape, optional) as Triton reads them."""
    reshape = pbtxt.one(tensor, "reshape")
    optional = pbtxt.one(tensor, "optional", pbtxt.Enum("false"))
    data_type = pbtxt.one(tensor, "data_type")
    return (str(data_type) if not isinstance(data_type, pbtxt.Placeholder) else None,
            [int(d) for d in pbtxt.all_of(tensor, "dims") if not isinstance(d, pbtxt.EmptyList)],
            None if reshape is None else [int(d) for d in pbtxt.all_of(reshape, "shape")
                                          if not isinstance(d, pbtxt.EmptyList)],
            str(optional) == "true")


# --- nemoc's table against the upstream files -----------------------------------------------
with open(os.path.join(SRC, "libsonnet", "triton_templates.json")) as f:
    table = json.load(f)
for tag, entry in table.items():
    if not os.path.isdir(os.path.join(UPSTREAM, tag)):
        fail("table: %s not in %s" % (tag, UPSTREAM))
        continue
    for model in MODELS:
        row = entry["models"].get(model)
        if row is None:
            fail("table %s: model %s missing" % (tag, model))
            continue
        lines = upstream_text(tag, model).split("\n")
        want_src = "%s:all_models/inflight_batcher_llm/%s/config.pbtxt" % (tag, model)
        if row.get("$src") != want_src:
            fail("table %s %s: $src %r, want %r" % (tag, model, row.get("$src"), want_src))

        def cited(r, ident):
            src = r.get("$src", "")
            m = re.fullmatch(re.escape(want_src) + r":(\d+)", src)
            if not m:
                fail("table %s %s: %s cites %r" % (tag, model, ident, src))
                return
            # The cited line opens the entry: it or the next few lines name it.
            n = int(m.group(1))
            if not any('"%s"' % ident in line for line in lines[n - 1:n + 3]):
                fail("table %s %s: %s cited at %s, line %d does not declare it" % (tag, model, ident, src, n))

        up = template(tag, model)
        for kind in ("input", "output"):
            rows = {r["name"]: r for r in row.get(kind, [])}
            for name, r in rows.items():
                cited(r, name)
            if set(rows) != set(tensors(up, kind)):
                fail("table %s %s: %ss %s, upstream %s" % (tag, model, kind, sorted(rows), sorted(tensors(up, kind))))
        keys = {r["key"]: r for r in row.get("parameters", [])}
        for key, r in keys.items():
            cited(r, key)
        if set(keys) != set(pbtxt.parameters(up)):
            fail("table %s %s: parameters %s, upstream %s" % (tag, model, sorted(keys), sorted(pbtxt.parameters(up))))
        for step in row.get("ensemble_scheduling", {}).get("step", []):
            cited(step, step["model_name"])


# --- the compiled templates serve.libsonnet fills (issue #47) are the table's -------------------
import subprocess  # noqa: E402
with open(os.path.join(SRC, "libsonnet", "triton_templates.json"), "rb") as f:
    want = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "scripts", "triton_templates.py"), "--compiled"],
                          input=f.read(), capture_output=True, check=True).stdout
with open(os.path.join(SRC, "libsonnet", "triton_compiled.json"), "rb") as f:
    if f.read() != want:
        fail("libsonnet/triton_compiled.json is not scripts/triton_templates.py --compiled of the table; regenerate it")


# --- generated model repositories ------------------------------------------------------------
def check_repository(label, files):
    configmaps = [o for o in files if o.get("kind") == "ConfigMap"
                  and any(k.endswith("config.pbtxt") for k in (o.get("data") or {}))]
    deployments = [o for o in files if o.get("kind") == "Deployment"]
    if len(configmaps) != 1 or len(deployments) != 1:
        fail("%s: %d model repository ConfigMaps, %d Deployments" % (label, len(configmaps), len(deployments)))
        return
    data = configmaps[0]["data"]
    pod = deployments[0]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    release = container["image"].rsplit(":", 1)[1][:5]
    tag = BACKEND_OF_RELEASE.get(release)
    if tag is None:
        fail("%s: image %s: no tensorrtllm_backend release known for Triton %s" % (label, container["image"], release))
        return
    configs, keys = {}, {}
    for key, text in data.items():
        if not key.endswith("config.pbtxt"):
            continue
        try:
            message = pbtxt.parse(text)
        except pbtxt.ParseError as e:
            fail("%s: %s: %s" % (label, key, e))
            continue
        configs[pbtxt.one(message, "name")] = message
        keys[pbtxt.one(message, "name")] = key
    # Which emitted model plays which template.
    role = {}
    for name, config in configs.items():
        if pbtxt.one(config, "backend") == "tensorrtllm":
            role["tensorrt_llm"] = name
        elif pbtxt.one(config, "platform") == "ensemble":
            role["ensemble"] = name
        elif name in ("preprocessing", "postprocessing"):
            role[name] = name
    for model in MODELS:
        if model not in role:
            fail("%s: no %s model in the repository (models: %s)" % (label, model, sorted(configs)))
    for model, name in role.items():
        got, want = configs[name], template(tag, model)
        where = "%s: %s (%s:all_models/inflight_batcher_llm/%s/config.pbtxt)" % (label, name, tag, model)
        for ph in pbtxt.placeholders(got):
            fail("%s: unfilled ${%s}" % (where, ph))
        if "${" in data[keys[name]]:
            fail("%s: a ${...} is left in the text" % where)
        for field in ("backend", "platform"):
            w = pbtxt.one(want, field)
            if w is not None and not isinstance(w, pbtxt.Placeholder) and pbtxt.one(got, field) != w:
                fail("%s: %s %r, template %r" % (where, field, pbtxt.one(got, field), w))
        for kind in ("input", "output"):
            have = tensors(got, kind)
            for tname, t in tensors(want, kind).items():
                if tname not in have:
                    fail("%s: %s %s missing" % (where, kind, tname))
                    continue
                w, g = shape(t), shape(have[tname])
                if w[0] is None:  # a ${...}_datatype of the template: any type
                    g, w = (None,) + g[1:], w
                if w != g:
                    fail("%s: %s %s is (data_type, dims, reshape, optional) %s, template %s" % (where, kind, tname, g, w))
            extra = set(have) - set(tensors(want, kind))
            if extra:
                fail("%s: %ss the template lacks: %s" % (where, kind, sorted(extra)))
        params = pbtxt.parameters(got)
        for key, (value, _) in pbtxt.parameters(want).items():
            if key not in params:
                fail("%s: parameter %s not set" % (where, key))
            elif params[key][0] is None:
                fail("%s: parameter %s has no string_value" % (where, key))
        if model in ("preprocessing", "postprocessing"):
            tokenizer = params.get("tokenizer_dir", ("", 0))[0] or ""
            if not tokenizer.startswith("/"):
                fail("%s: tokenizer_dir %r is not a path" % (where, tokenizer))
            if name + ".model.py" not in data:
                fail("%s: no model.py" % where)
        if model == "tensorrt_llm":
            if params.get("gpt_model_path", ("",))[0] in ("", None):
                fail("%s: gpt_model_path empty" % where)

    # The ensemble's wiring.
    if "ensemble" in role:
        ens = configs[role["ensemble"]]
        available = set(tensors(ens, "input"))
        produced = set()
        steps = pbtxt.all_of(pbtxt.one(ens, "ensemble_scheduling", []), "step")
        if not steps:
            fail("%s: ensemble has no steps" % label)
        for step in steps:
            model = pbtxt.one(step, "model_name")
            if model not in configs:
                fail("%s: ensemble step names model %s, not in the repository %s" % (label, model, sorted(configs)))
                continue
            inputs, outputs = tensors(configs[model], "input"), tensors(configs[model], "output")
            for m in pbtxt.all_of(step, "input_map"):
                k, v = pbtxt.one(m, "key"), pbtxt.one(m, "value")
                if k not in inputs:
                    fail("%s: ensemble maps %s into %s, which has no such input" % (label, k, model))
                if v not in available:
                    fail("%s: ensemble feeds %s.%s from %s, produced by no earlier step nor an ensemble input" % (label, model, k, v))
            for m in pbtxt.all_of(step, "output_map"):
                k, v = pbtxt.one(m, "key"), pbtxt.one(m, "value")
                if k not in outputs:
                    fail("%s: ensemble reads %s from %s, which has no such output" % (label, k, model))
                available.add(v)
                produced.add(v)
            for name, t in inputs.items():
                mapped = {pbtxt.one(m, "key") for m in pbtxt.all_of(step, "input_map")}
                if name not in mapped and not shape(t)[3]:
                    fail("%s: ensemble leaves required input %s of %s unfed" % (label, name, model))
        for name in tensors(ens, "output"):
            if name not in produced:
                fail("%s: ensemble output %s produced by no step" % (label, name))
        # end_id/pad_id reach the engine (without end_id generation never stops at EOS).
        trt = [s for s in steps if pbtxt.one(s, "model_name") == role.get("tensorrt_llm")]
        fed = {pbtxt.one(m, "key") for s in trt for m in pbtxt.all_of(s, "input_map")}
        for name in ("end_id", "pad_id"):
            if name not in fed:
                fail("%s: ensemble does not feed %s to the engine" % (label, name))

    # The Deployment mounts every file of the repository where Triton looks.
    volume = [v for v in pod.get("volumes", []) if v.get("configMap", {}).get("name") == configmaps[0]["metadata"]["name"]]
    items = {i["key"]: i["path"] for v in volume for i in v["configMap"].get("items", [])}
    mounts = [m for m in container.get("volumeMounts", []) if volume and m["name"] == volume[0]["name"]]
    repo = [a.split("=", 1)[1] for a in container.get("command", []) + container.get("args", [])
            if a.startswith("--model-repository=")]
    if not mounts or not repo or mounts[0]["mountPath"] != repo[0]:
        fail("%s: the model repository ConfigMap is not mounted at --model-repository %s" % (label, repo))
    for name in configs:
        if items.get(keys[name]) != name + "/config.pbtxt":
            fail("%s: %s mounted at %r, not %s/config.pbtxt" % (label, keys[name], items.get(keys[name]), name))
        if not any(p.startswith(name + "/1/") for p in items.values()):
            fail("%s: model %s has no version directory 1/" % (label, name))


specs = [p for p in sorted(glob.glob(os.path.join(SRC, "examples", "*.yaml")) + glob.glob(os.path.join(SRC, "tests", "specs", "*.yaml")))
         if re.search(r"^\s+serve:", open(p).read(), re.M)]
if not specs:
    fail("no spec with a serve stage")
checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for spec in specs:
        out = os.path.join(tmp, os.path.basename(spec))
        r = subprocess.run([NEMOC, "build", "--quiet", "--out", out, spec], capture_output=True, text=True)
        if r.returncode != 0:
            fail("%s: nemoc build failed: %s" % (spec, r.stderr[-2000:]))
            continue
        for serve_dir in sorted(glob.glob(os.path.join(out, "*", "*", "70-serve"))):
            files = []
            for path in sorted(glob.glob(os.path.join(serve_dir, "*.yaml"))):
                with open(path) as f:
                    files.extend(d for d in yaml.safe_load_all(f) if d)
            check_repository(os.path.relpath(serve_dir, tmp), files)
            checked += 1
if checked == 0:
    fail("no 70-serve directory built")

for msg in failures:
    print("FAIL " + msg, file=sys.stderr)
print("%d model repositories checked, %d failures" % (checked, len(failures)))
sys.exit(1 if failures else 0)
