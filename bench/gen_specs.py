#!/usr/bin/env python3
"""Writes a deterministic synthetic spec set for bench/run.

    bench/gen_specs.py TARGETS OUTDIR

Each spec carries one target per entry of TARGETS below (every profile with
every runtime it supports, the shape of tests/specs/profile-matrix.yaml), so
TARGETS=1000 gives 100 specs of 10 targets. Specs differ in name, namespace
and a few training values; the same arguments always give the same bytes.

Stages: STAGES lists what every spec runs: the whole pipeline (NCCL
preflight, data preparation, training on the prepared data, evaluation,
conversion, TensorRT-LLM, Triton serving) plus monitoring, on every target.
A new stage is one entry here (a dict per stage, as in the spec).
"""
import json
import os
import sys

# Container releases every target's GPU runs (B200 needs 25.01 or later, A14);
# int8 engines because A100 has no FP8 (A18); the tokenizer is gated (A3).
TRITON = {"repository": "nvcr.io/nvidia/tritonserver", "tag": "25.01-trtllm-python-py3"}
# eks-efa multi-node training runs an EFA-capable build of the image (B8).
EFA = {"image": {"repository": "123456789012.dkr.ecr.us-west-2.amazonaws.com/nemo-efa",
                 "tag": "nemo25.02-efa"}, "awsOfiNccl": "1.13.2"}

STAGES = {
    "ncclTest": lambda i: {"minBusBandwidthGBps": 100},
    "dataPrep": lambda i: {"input": "corpus/web-%04d.jsonl" % i, "jsonKey": "text", "workers": 16},
    "train": lambda i: {
        "nodes": 2,
        "parallelism": {"tensor": 2, "sequenceParallel": True},
        "batch": {"micro": 1, "global": 64},
        "seqLength": 8192,
        "maxSteps": 1000 + i,  # longer than the default 100-step warm-up (a warning otherwise)
        "data": {"fromDataPrep": True},
    },
    "evaluate": lambda i: {"tasks": ["hellaswag", "winogrande"]},
    "convert": lambda i: {"to": "huggingface"},
    "tensorrtLLM": lambda i: {"quantization": "int8", "maxBatchSize": 64, "maxInputLen": 4096,
                              "maxOutputLen": 1024, "image": TRITON},
    "serve": lambda i: {"triton": {"replicas": 2, "image": TRITON}},
}

TARGETS = [
    {"name": "vanilla-pytorchjob", "profile": "vanilla-k8s", "runtime": "pytorchjob",
     "rdma": {"resourceName": "nvidia.com/hostdev", "count": 8, "networks": ["ib-0", "ib-1"],
              "hcas": "mlx5"},
     "ncclTopologyConfigMap": "nccl-topology"},
    {"name": "vanilla-trainjob", "profile": "vanilla-k8s", "runtime": "trainjob",
     "rdma": {"resourceName": "rdma/rdma_shared_device_a", "count": 1, "networks": ["roce-net"]}},
    {"name": "vanilla-jobset", "profile": "vanilla-k8s", "runtime": "jobset", "gpu": "h200-141gb",
     "rdma": {"count": 8}},
    {"name": "vanilla-indexed-job", "profile": "vanilla-k8s", "runtime": "indexed-job",
     "gpu": "a100-80gb", "rdma": {"count": 4},
     "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}},
    {"name": "eks-pytorchjob", "profile": "eks-efa", "efa": EFA, "runtime": "pytorchjob",
     "instanceType": "p5.48xlarge", "iamRoleArn": "arn:aws:iam::123456789012:role/nemo",
     "storage": {"results": {"fsxLustre": {"claimName": "fsx-claim"}, "mountPath": "/fsx"},
                 "data": {"s3": {"bucket": "training-data", "prefix": "tokenized",
                                 "region": "us-east-1"}}}},
    {"name": "eks-trainjob", "profile": "eks-efa", "efa": EFA, "runtime": "trainjob",
     "instanceType": "p5en.48xlarge",
     "storage": {"results": {"fsxLustre": {"storageClassName": "fsx-sc", "size": "2400Gi"}}}},
    {"name": "eks-jobset", "profile": "eks-efa", "efa": EFA, "runtime": "jobset",
     "instanceType": "p6-b200.48xlarge",
     "storage": {"results": {"fsxLustre": {"claimName": "fsx-claim"}}}},
    {"name": "eks-indexed-job", "profile": "eks-efa", "efa": EFA, "runtime": "indexed-job",
     "instanceType": "p4de.24xlarge",
     "storage": {"results": {"fsxLustre": {"claimName": "fsx-claim"}}}},
    {"name": "gke-jobset", "profile": "gke-a4",
     "gcpServiceAccount": "trainer@my-project.iam.gserviceaccount.com",
     "kueue": {"clusterQueue": "a4", "covers": ["nvidia.com/gpu"], "topology": "block"},
     "storage": {"results": {"gcs": {"bucket": "my-logs", "onlyDir": "runs"}},
                 "data": {"gcs": {"bucket": "my-data"}}}},
    {"name": "gke-indexed-job", "profile": "gke-a4", "runtime": "indexed-job",
     "hostNetwork": False,
     "kueue": {"clusterQueue": "a4-tas", "topology": "subblock", "required": True,
               "clusterObjects": True},
     "storage": {"results": {"gcs": {"bucket": "my-logs"}}}},
]


def spec(i, targets):
    return {
        "apiVersion": "nemoc.dev/v1alpha1",
        "kind": "Project",
        "metadata": {"name": "synth-%04d" % i, "labels": {"team": "bench"}},
        "spec": {
            "namespace": "synth-%04d" % i,
            "image": {"repository": "nvcr.io/nvidia/nemo", "tag": "25.02"},
            "imagePullSecrets": ["ngc-registry"],
            "model": {"preset": "llama3-8b", "source": {"hfTokenSecret": "hf-token"}},
            "storage": {
                "results": {"nfs": {"server": "10.0.0.2", "path": "/export/results"}},
                "data": {"pvc": {"claimName": "datasets", "subPath": "tokenized"}},
            },
            "stages": {name: make(i) for name, make in STAGES.items()},
            "monitoring": {"serviceMonitor": True, "alerts": True},
            "targets": targets,
        },
    }


def to_yaml(value, indent=0):
    """Block YAML for mappings at the top, JSON flow (valid YAML) below two levels."""
    pad = "  " * indent
    if isinstance(value, dict) and indent < 3:
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item and indent < 2:
                lines.append("%s%s:\n%s" % (pad, key, to_yaml(item, indent + 1)))
            else:
                lines.append("%s%s: %s" % (pad, key, json.dumps(item)))
        return "\n".join(lines)
    if isinstance(value, list) and indent < 3:
        return "\n".join("%s- %s" % (pad, json.dumps(item)) for item in value)
    return pad + json.dumps(value)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    total, outdir = int(sys.argv[1]), sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    i = 0
    while total > 0:
        targets = TARGETS[:min(total, len(TARGETS))]
        with open(os.path.join(outdir, "synth-%04d.yaml" % i), "w") as f:
            f.write(to_yaml(spec(i, targets)) + "\n")
        total -= len(targets)
        i += 1


if __name__ == "__main__":
    main()
