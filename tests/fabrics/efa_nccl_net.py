#!/usr/bin/python3
"""EKS multi-node pods run an EFA-capable image and pin NCCL to its aws-ofi-nccl plugin (B8, F10).

Stock NGC NeMo images carry no libfabric/aws-ofi-nccl: NCCL silently uses TCP sockets.
A target declares the image built FROM the NeMo image with the EFA stack (targets[].efa) and
its aws-ofi-nccl version; NCCL_NET must name that version's plugin so a missing plugin fails
instead of falling back. aws/aws-ofi-nccl src/nccl_ofi_interface_nvidia.c:182 names it
"AWS Libfabric" up to v1.12.1-aws and "Libfabric" from v1.13.0-aws.
Builds every example and test spec and checks each container requesting vpc.amazonaws.com/efa
(and each TrainJob's spec.trainer): image = the target's efa.image (never nvcr.io/nvidia/...),
NCCL_NET = the plugin name of efa.awsOfiNccl. Then a spec without efa must be refused.
Usage: efa_nccl_net.py <nemoc> <source dir>
"""
import glob
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build, build_all, containers, require_yaml, resources_of  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]


def plugin_name(version):
    major, minor = (int(x) for x in re.match(r"v?(\d+)\.(\d+)", version).groups())
    return "Libfabric" if (major, minor) >= (1, 13) else "AWS Libfabric"


def efa_users(node):
    """(image, env dict) of each container-like object requesting EFA devices."""
    for c in containers(node):
        res = resources_of(c)
        if any("vpc.amazonaws.com/efa" in (res.get(k) or {}) for k in ("requests", "limits")):
            yield c.get("image"), {e["name"]: e.get("value") for e in c.get("env") or []}


def main():
    specs = all_specs(SRC)
    errors, checked, names = [], 0, set()
    with tempfile.TemporaryDirectory(prefix="nemoc-efa-net-") as tmp:
        out = os.path.join(tmp, "out")
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for spec in specs:
            with open(spec) as f:
                doc = yaml.safe_load(f)
            for t in doc["spec"]["targets"]:
                if t["profile"] != "eks-efa" or "efa" not in t:
                    continue
                want_image = t["efa"]["image"]["repository"] + ":" + str(t["efa"]["image"]["tag"])
                want_net = plugin_name(str(t["efa"]["awsOfiNccl"]))
                names.add(want_net)
                for path in glob.glob(os.path.join(out, doc["metadata"]["name"], t["name"], "[0-9][0-9]-*", "*.yaml")):
                    with open(path) as f:
                        obj = yaml.safe_load(f)
                    trainer_image = None
                    if obj.get("kind") == "TrainJob":
                        trainer_image = obj["spec"]["trainer"].get("image")
                    for image, cenv in efa_users(obj):
                        checked += 1
                        image = image or trainer_image
                        where = os.path.relpath(path, out)
                        if image != want_image or str(image).startswith("nvcr.io/nvidia/"):
                            errors.append(f"{where}: image {image}, want the EFA image {want_image}")
                        if cenv.get("NCCL_NET") != want_net:
                            errors.append(f"{where}: NCCL_NET {cenv.get('NCCL_NET')!r}, aws-ofi-nccl {t['efa']['awsOfiNccl']} names its plugin {want_net!r}")
        # The stock image without an EFA declaration is refused, located at the target.
        with open(os.path.join(SRC, "examples", "llama2-7b-lora-eks.yaml")) as f:
            text = f.read()
        stripped = re.sub(r"\n[ \t]*#[^\n]*\n([ \t]*)efa: \{[^\n]*\}", "", text)
        stripped = re.sub(r"\n[ \t]*efa: \{[^\n]*\}", "", stripped)
        if stripped == text:
            errors.append("could not remove efa from examples/llama2-7b-lora-eks.yaml")
        bad = os.path.join(tmp, "no-efa.yaml")
        with open(bad, "w") as f:
            f.write(stripped)
        r = build(NEMOC, SRC, os.path.join(tmp, "bad"), [bad])
        if r.returncode != 1 or not re.search(re.escape(bad) + r":\d+:\d+: error: target \S+: eks-efa training needs an EFA-capable image", r.stderr):
            errors.append(f"stock image without efa: exit {r.returncode}, want a located error\n{r.stderr[:1500]}")
    if checked < 8 or len(names) < 2:
        errors.append(f"too little to prove anything: {checked} EFA containers, plugin names {sorted(names)}")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"{checked} EFA containers checked, plugin names {sorted(names)}: {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
