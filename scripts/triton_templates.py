#!/usr/bin/python3
"""Regenerates libsonnet/triton_templates.json, nemoc's table of tensorrtllm_backend's
inflight_batcher_llm model templates (issue #14, A15).

Reads the templates as copied unchanged into ../shared/upstream/tensorrtllm_backend/<tag>/
(triton-inference-server/tensorrtllm_backend all_models/inflight_batcher_llm/<model>/config.pbtxt)
and writes each model's fields as pbtxt data for k8s.pbtxtDocument: enums as {"$enum": ...},
the template's ${name} placeholders as {"$placeholder": name} (serve.libsonnet fills them), and
"$src": "<tag>:<path>:<line>" on every input, output, parameter and ensemble step.

Usage: scripts/triton_templates.py [upstream dir] > libsonnet/triton_templates.json
       scripts/triton_templates.py --compiled < libsonnet/triton_templates.json > libsonnet/triton_compiled.json

--compiled writes what serve.libsonnet fills per target (issue #47): each version's model templates
without their "$src" citations as JSON text cut at the placeholders ({"chunks": [text, ...],
"names": [placeholder, ...]}, chunks[i] before names[i]), read as data (std.parseJson of importstr):
a target joins the chunks with its values' JSON and parses the result, so no evaluation walks the
templates.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "serve"))
import pbtxt  # noqa: E402

# Backend release -> the NGC tritonserver release (YY.MM) whose -trtllm-python-py3 image ships it
# (tensorrtllm_backend README support matrix / NGC release notes: 24.07 = v0.11.0, 25.01 = v0.17.0).
VERSIONS = {"v0.11.0": ["24.07"], "v0.17.0": ["25.01"]}
MODELS = ["tensorrt_llm", "preprocessing", "postprocessing", "ensemble"]
CITED = {"input", "output", "parameters", "step"}
LISTS = {"input", "output", "parameters", "step", "input_map", "output_map", "instance_group", "dims",
         "preferred_batch_size", "shape"}


def convert(message, src):
    out = {}
    for f in message:
        v = f.value
        if isinstance(v, pbtxt.EmptyList):
            out[f.name] = []
            continue
        if isinstance(v, str) and re.fullmatch(r"\$\{\w+\}", v):
            v = pbtxt.Placeholder(v[2:-1])
        elif isinstance(v, str) and "${" in v:
            raise SystemExit("%s: placeholder inside %r" % (src, v))
        if isinstance(v, list):
            v = convert(v, src)
            if f.name in CITED:
                v = {"$src": "%s:%d" % (src, min([g.line for g in f.value] or [f.line]))} | v
        elif isinstance(v, pbtxt.Placeholder):
            v = {"$placeholder": str(v)}
        elif isinstance(v, pbtxt.Enum):
            v = True if v == "true" else False if v == "false" else {"$enum": str(v)}
        if f.name in LISTS:
            out.setdefault(f.name, []).append(v)
        elif f.name in out:
            raise SystemExit("%s: %s repeated" % (src, f.name))
        else:
            out[f.name] = v
    return out


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "$src"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


MARK = "@@nemoc-placeholder:"


def marked(v):
    if isinstance(v, dict):
        if "$placeholder" in v:
            return MARK + v["$placeholder"] + "@@"
        return {k: marked(x) for k, x in v.items()}
    if isinstance(v, list):
        return [marked(x) for x in v]
    return v


def cut(template):
    text = json.dumps(marked(strip(template)), separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    parts = re.split(r'"' + re.escape(MARK) + r'(\w+)@@"', text)
    return {"chunks": parts[0::2], "names": parts[1::2]}


def compiled(table):
    return {tag: {m: cut(t) for m, t in entry["models"].items()} for tag, entry in table.items()}


def main():
    if "--compiled" in sys.argv[1:]:
        json.dump(compiled(json.load(sys.stdin)), sys.stdout, separators=(",", ":"), sort_keys=True)
        sys.stdout.write("\n")
        return
    upstream = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "upstream")
    table = {}
    for tag, releases in VERSIONS.items():
        models = {}
        for model in MODELS:
            path = "all_models/inflight_batcher_llm/%s/config.pbtxt" % model
            with open(os.path.join(upstream, "tensorrtllm_backend", tag, model + ".config.pbtxt")) as f:
                text = f.read()
            src = "%s:%s" % (tag, path)
            models[model] = {"$src": src} | convert(pbtxt.parse(text), src)
        table[tag] = {"tritonReleases": releases, "models": models}
    json.dump(table, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


main()
