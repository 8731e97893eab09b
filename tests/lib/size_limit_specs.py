"""The spec at every input limit (tests/limits/size_limits.py, bench/size_growth.py).

BASE is a small valid spec; LIMITS names every bounded list and map of the input
schema with its maxItems/maxProperties and a function that fills it to n items.
"""
import copy

BASE = {
    "apiVersion": "nemoc.dev/v1alpha1",
    "kind": "Project",
    "metadata": {"name": "limits"},
    "spec": {
        "namespace": "limits-ns",
        "image": {"repository": "nvcr.io/nvidia/nemo", "tag": "24.09"},
        "model": {"preset": "llama2-7b", "source": {"hfTokenSecret": "hf-token"}},
        "storage": {"results": {"nfs": {"server": "nfs.internal", "path": "/export"}}},
        "stages": {
            "train": {
                "mode": "pretrain",
                "nodes": 2,
                "gpusPerNode": 8,
                "parallelism": {"tensor": 2, "pipeline": 2, "sequenceParallel": True},
                "batch": {"micro": 1, "global": 32},
                "data": {"prefixes": [{"path": "data/p0_text_document"}]},
            }
        },
        "targets": [{"name": "t0", "profile": "vanilla-k8s", "rdma": {"count": 4}}],
    },
}

# Every bounded list/map the spec has, with its schema limit and a filler.
LIMITS = {
    "imagePullSecrets": (64, lambda s, n: s["spec"].__setitem__(
        "imagePullSecrets", ["pull-%d" % i for i in range(n)])),
    "labels": (64, lambda s, n: s["metadata"].__setitem__(
        "labels", {"l%d" % i: "v%d" % i for i in range(n)})),
    "annotations": (32, lambda s, n: s["metadata"].__setitem__(
        "annotations", {"nemoc.dev/a%d" % i: "x" * 4000 for i in range(n)})),
    "train.env": (48, lambda s, n: s["spec"]["stages"]["train"].__setitem__(
        "env", {"STAGE_%d" % i: str(i) for i in range(n)})),
    "target.env": (48, lambda s, n: [t.__setitem__(
        "env", {"TARGET_%d" % i: str(i) for i in range(n)}) for t in s["spec"]["targets"]]),
    "train.overrides": (256, lambda s, n: s["spec"]["stages"]["train"].__setitem__(
        "overrides", ["++model.nemoc_limit_%d=1" % i for i in range(n)])),
    "data.prefixes": (1024, lambda s, n: s["spec"]["stages"]["train"]["data"].__setitem__(
        "prefixes", [{"path": "data/p%d_text_document" % i, "weight": 1} for i in range(n)])),
}


def with_targets(spec, n):
    s = copy.deepcopy(spec)
    s["spec"]["targets"] = [{"name": "t%d" % i, "profile": "vanilla-k8s", "rdma": {"count": 4}}
                            for i in range(n)]
    return s


def at_max(spec, skip=None):
    s = copy.deepcopy(spec)
    for name, (limit, fill) in LIMITS.items():
        if name != skip:
            fill(s, limit)
    return s
