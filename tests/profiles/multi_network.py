#!/usr/bin/python3
"""gke-a4 training pods run the way upstream runs them in each network mode (field review B17).

Multi-network mode (`hostNetwork: false`), as GKE's own A4 GPUDirect RDMA example runs it
(GoogleCloudPlatform/container-engine-accelerators 155bfa49 gpudirect-rdma/nccl-test-a4.yaml):
  - `hostNetwork: false`, no privileged container, no added capability: the RDMA NICs are moved
    into the pod's network namespace by GKE multi-networking, nothing drives the host's;
  - `networking.gke.io/default-interface: eth0` and a `networking.gke.io/interfaces` JSON list
    with eth0 on `default` and one interface on each of the eight RDMA networks rdma-0..rdma-7;
  - /dev/shm a memory-backed emptyDir; gIB's set_nccl_env.sh sourced before the program.
  nemoc also attaches the second gVNIC (eth1 on gvnic-1, the A4 chart's default list, gke-a4.md
  section 2.2) because NCCL_SOCKET_IFNAME and NVTE_UB_SOCKET_IFNAME name it: every interface a
  socket variable names must be in the list.
Host-network mode (the default), as AI-Hypercomputer/gpu-recipes runs A4 (gke-a4.md section 8):
  `hostNetwork: true`, `dnsPolicy: ClusterFirstWithHostNet`, privileged workload container, no
  multi-network annotations (GKE refuses them on a host-network pod).

Builds every example and test spec and checks every gke-a4 pod that installs the gIB plugin.
Usage: multi_network.py <nemoc> <source dir>
"""
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from nemoc_specs import all_specs, build_all, mappings, require_yaml  # noqa: E402

yaml = require_yaml()

NEMOC, SRC = sys.argv[1], sys.argv[2]
RDMA_NETWORKS = {f"rdma-{i}" for i in range(8)}
SOCKET_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NVTE_UB_SOCKET_IFNAME")


def templates(doc):
    """(metadata, pod spec) of every pod template in doc: a mapping whose `spec` holds containers."""
    for m in mappings(doc):
        spec = m.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
            yield m.get("metadata") or {}, spec


def socket_interfaces(spec):
    """Interface names the pod's socket variables name, from env values and shell text."""
    names = set()
    for c in spec.get("containers", []):
        for e in c.get("env") or []:
            if e.get("name") in SOCKET_VARS and "value" in e:
                names.update(e["value"].split(","))
        text = "\n".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
        for var in SOCKET_VARS:
            for value in re.findall(var + r"=([A-Za-z0-9_,.^=-]+)", text):
                names.update(value.split(","))
    return {n.lstrip("^=") for n in names if n}


def check_multi_network(where, meta, spec):
    errors = []
    ann = meta.get("annotations") or {}
    if spec.get("hostNetwork"):
        errors.append("hostNetwork is set in multi-network mode")
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            errors.append(f"container {c['name']} is privileged (GKE's A4 RDMA example is not)")
        if (sc.get("capabilities") or {}).get("add"):
            errors.append(f"container {c['name']} adds capabilities {sc['capabilities']['add']}")
    if ann.get("networking.gke.io/default-interface") != "eth0":
        errors.append("networking.gke.io/default-interface is not eth0")
    try:
        interfaces = json.loads(ann.get("networking.gke.io/interfaces", ""))
    except ValueError as e:
        return errors + [f"networking.gke.io/interfaces is not JSON: {e}"]
    names = [i.get("interfaceName") for i in interfaces]
    networks = {i.get("network"): i.get("interfaceName") for i in interfaces}
    if len(set(names)) != len(names):
        errors.append(f"interface names repeat: {names}")
    if networks.get("default") != "eth0":
        errors.append("eth0 is not on the default network")
    if not RDMA_NETWORKS <= set(networks):
        errors.append(f"RDMA networks missing: {sorted(RDMA_NETWORKS - set(networks))}")
    for name in sorted(socket_interfaces(spec) - set(names)):
        errors.append(f"a socket variable names {name}, which the pod does not have")
    shm = [v for v in spec.get("volumes", []) if (v.get("emptyDir") or {}).get("medium") == "Memory"]
    if not shm:
        errors.append("no memory-backed emptyDir for /dev/shm")
    return [f"{where}: {e}" for e in errors]


def check_host_network(where, meta, spec):
    errors = []
    ann = meta.get("annotations") or {}
    if spec.get("hostNetwork") is not True:
        errors.append("hostNetwork is not true")
    if spec.get("dnsPolicy") != "ClusterFirstWithHostNet":
        errors.append(f"dnsPolicy {spec.get('dnsPolicy')}, not ClusterFirstWithHostNet")
    workload = [c for c in spec.get("containers", []) if (c.get("securityContext") or {}).get("privileged")]
    if not workload:
        errors.append("no privileged container (the A4 recipe drives the host's RoCE NICs privileged)")
    for key in ("networking.gke.io/default-interface", "networking.gke.io/interfaces"):
        if key in ann:
            errors.append(f"{key} on a host-network pod")
    return [f"{where}: {e}" for e in errors]


def main():
    errors, counts = [], {"multi-network": 0, "host-network": 0}
    with tempfile.TemporaryDirectory(prefix="nemoc-multinet-") as tmp:
        out = os.path.join(tmp, "out")
        run = build_all(NEMOC, SRC, out)
        if run.returncode != 0:
            print(run.stderr, file=sys.stderr)
            return 1
        for spec_path in all_specs(SRC):
            with open(spec_path) as f:
                doc = yaml.safe_load(f)
            project = doc["metadata"]["name"]
            for t in doc["spec"]["targets"]:
                if t["profile"] != "gke-a4":
                    continue
                multi = t.get("hostNetwork") is False
                for path in sorted(glob.glob(os.path.join(out, project, t["name"], "[0-9][0-9]-*", "*.yaml"))):
                    with open(path) as f:
                        objs = [o for o in yaml.safe_load_all(f) if o]
                    for obj in objs:
                        for meta, spec in templates(obj):
                            if not any(c.get("name") == "nccl-plugin-installer" for c in spec.get("initContainers") or []):
                                continue
                            where = os.path.relpath(path, out)
                            if multi:
                                counts["multi-network"] += 1
                                errors += check_multi_network(where, meta, spec)
                            else:
                                counts["host-network"] += 1
                                errors += check_host_network(where, meta, spec)
    if counts["multi-network"] < 2 or counts["host-network"] < 2:
        errors.append(f"too little to prove anything: {counts}")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"gIB pods checked: {counts}; {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
