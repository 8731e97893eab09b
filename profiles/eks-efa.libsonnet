// eks-efa: Amazon EKS with Elastic Fabric Adapter. GPUs through the NVIDIA
// device plugin or GPU Operator, EFA through aws-efa-k8s-device-plugin
// (vpc.amazonaws.com/efa), FSx for Lustre or Mountpoint for S3 storage, and
// IAM roles for service accounts. Facts: awsome-distributed-training.
local chain = import 'stages/chain.libsonnet';
local fabrics = import 'fabrics.libsonnet';
local k8s = import 'k8s.libsonnet';
local kueue = import 'kueue.libsonnet';
local storage = import 'storage.libsonnet';

{
  name: 'eks-efa',
  // What `nemoc schema` and `nemoc explain` say about this profile, and the target
  // fields only it reads (scripts/update-schema-catalogue; checks.cc refuses them on
  // the other built-in profiles: spec.wrong-profile).
  description:: 'Amazon EKS with Elastic Fabric Adapter: GPU model and EFA devices from instanceType, FSx for Lustre or Mountpoint for S3 storage, IAM roles for service accounts (iamRoleArn), an EFA-capable image (efa).',
  targetFields:: ['instanceType', 'iamRoleArn', 'efa'],
  defaults: { runtime: 'pytorchjob' },
  gpuResource: 'nvidia.com/gpu',
  storageBackends: ['fsxLustre', 's3', 'pvc', 'nfs'],

  // The single source of truth per instance type: GPUs, GPU model (a key of
  // libsonnet/accelerators.json) and EFA devices (instance-profiles.conf).
  instances: {
    'p4d.24xlarge': { gpus: 8, gpu: 'a100-40gb', efa: 4 },
    'p4de.24xlarge': { gpus: 8, gpu: 'a100-80gb', efa: 4 },
    'p5.48xlarge': { gpus: 8, gpu: 'h100-80gb', efa: 32 },
    'p5e.48xlarge': { gpus: 8, gpu: 'h200-141gb', efa: 32 },
    'p5en.48xlarge': { gpus: 8, gpu: 'h200-141gb', efa: 16 },
    'p6-b200.48xlarge': { gpus: 8, gpu: 'b200-180gb', efa: 8 },
  },

  // Hugepages for libfabric's bounce buffers, requested only when libfabric
  // uses them (B7): fabrics.efa sets FI_EFA_USE_HUGE_PAGE=0 (os.fork() in data
  // loaders), so a 2Mi-hugepage request would reserve memory for nothing and
  // leave pods Pending on nodes without preallocated hugepages. With hugepages
  // on, the pod requests them with memory (awsome-distributed-training
  // nccl-tests.yaml).
  hugepages: '5120Mi',
  usesHugepages:: fabrics.efa.FI_EFA_USE_HUGE_PAGE != '0',
  defaultMemory: '32000Mi',

  local efaOf(target) = if std.objectHasEx(target, 'efa', false) then target.efa else null,

  // NCCL_NET names the aws-ofi-nccl plugin, so NCCL fails when the plugin is
  // missing instead of falling back to TCP sockets over the ENA (B8, F10). Its
  // name: "AWS Libfabric" up to v1.12.1-aws (src/nccl_ofi_interface_nvidia.c:182),
  // "Libfabric" from v1.13.0-aws (same file and line) -- aws/aws-ofi-nccl.
  ncclNet(version)::
    local v = if std.startsWith(version, 'v') then std.substr(version, 1, std.length(version) - 1) else version;
    local parts = std.split(std.split(v, '-')[0], '.');
    local major = std.parseInt(parts[0]);
    local minor = std.parseInt(parts[1]);
    if major > 1 || (major == 1 && minor >= 13) then 'Libfabric' else 'AWS Libfabric',

  local instanceOf(ctx) =
    if std.objectHasEx(ctx.target, 'instanceType', false) && std.objectHasEx($.instances, ctx.target.instanceType, false)
    then $.instances[ctx.target.instanceType] else null,

  accelerator(ctx)::
    local instance = instanceOf(ctx);
    if instance == null then null else instance.gpu,

  // Placement of single-node stage pods (data preparation, evaluation,
  // conversion, engine build, serving): the instance type's GPU nodes and
  // shared storage, no EFA devices.
  localPlacement(ctx)::
    local pod = storage.pod(ctx);
    {
      annotations: {},
      workloadLabels: kueue.workloadLabels(ctx),
      // Kueue admits the workload by flipping suspend to false.
      suspend: kueue.suspend(ctx),
      resources: {},
      capabilities: [],
      privilegeReason: '',
      privileged: false,
      hostNetwork: false,
      env: {},
      nodeSelector: { 'node.kubernetes.io/instance-type': ctx.target.instanceType } + ctx.target.nodeSelector,
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      initContainers: [],
      volumes: pod.volumes,
      mounts: pod.mounts,
      prologue: null,
      fabric: 'none (single node)',
    },

  // Placement of multi-node workloads (training, NCCL preflight): the local
  // placement plus every EFA device of the instance.
  placement(ctx, runtime)::
    local instance = instanceOf(ctx);
    $.localPlacement(ctx) + {
      // Extended resources must be limits; requests = limits. A stage's own
      // memory request is merged over this default.
      resources: {
        'vpc.amazonaws.com/efa': instance.efa,
        memory: $.defaultMemory,
      } + (if $.usesHugepages then { 'hugepages-2Mi': $.hugepages } else {}),
      env: fabrics.efa + (if efaOf(ctx.target) != null then { NCCL_NET: $.ncclNet(efaOf(ctx.target).awsOfiNccl) } else {}),
      // The EFA-capable image runs the multi-node pods (B8).
      [if efaOf(ctx.target) != null then 'image']: efaOf(ctx.target).image,
      fabric: 'EFA: ' + instance.efa + ' × vpc.amazonaws.com/efa per ' + ctx.target.instanceType
              + (if $.usesHugepages then ', hugepages-2Mi ' + $.hugepages else ', no hugepages (FI_EFA_USE_HUGE_PAGE=0)')
              + ', libfabric provider efa',
    },

  serviceAccountAnnotations(ctx)::
    if std.objectHasEx(ctx.target, 'iamRoleArn', false) then { 'eks.amazonaws.com/role-arn': ctx.target.iamRoleArn } else {},


  diagnostics(ctx)::
    local target = ctx.target;
    local instance = instanceOf(ctx);
    local train = if std.objectHasEx(ctx.spec.stages, 'train', false) then ctx.spec.stages.train else null;
    (if !std.objectHasEx(target, 'instanceType', false) then [{
       code: 'profile.instance-type',
       pointer: ctx.targetPointer,
       message: 'eks-efa needs instanceType (the EC2 type of the GPU nodes)',
       hint: 'known types: ' + std.join(', ', std.objectFields($.instances)),
     }]
     else if instance == null then [{
       code: 'profile.instance-type',
       pointer: ctx.targetPointer + '/instanceType',
       message: 'unknown EFA instance type ' + target.instanceType,
       hint: 'known types: ' + std.join(', ', std.objectFields($.instances)),
     }]
     else [{
       code: 'profile.gpus-per-node',
       pointer: '/spec/stages/' + k + '/gpusPerNode',
       message: 'gpusPerNode ' + ctx.spec.stages[k].gpusPerNode + ' exceeds the ' + instance.gpus + ' GPUs of ' + target.instanceType,
     } for k in chain.present(ctx) if ctx.spec.stages[k].gpusPerNode > instance.gpus])
    + (if std.objectHasEx(target, 'gpu', false) then [{
         code: 'profile.gpu',
         pointer: ctx.targetPointer + '/gpu',
         atKey: true,
         message: 'eks-efa derives the GPU model from instanceType; remove gpu',
       }] else [])
    // B8: stock NGC NeMo images have no libfabric/aws-ofi-nccl; NCCL would run
    // over TCP. The awsome-distributed-training NeMo image is built FROM
    // nvcr.io/nvidia/nemo with the EFA installer and aws-ofi-nccl
    // (3.test_cases/megatron/nemo/kubernetes/Dockerfile).
    + (if train != null && efaOf(target) == null then [{
         code: 'profile.efa-image',
         pointer: ctx.targetPointer,
         message: 'eks-efa training needs an EFA-capable image: ' + k8s.imageRef(train.image)
                  + ' carries no libfabric/aws-ofi-nccl, so NCCL would fall back to TCP sockets',
         hint: 'build FROM ' + k8s.imageRef(train.image) + ' with the EFA installer and aws-ofi-nccl (aws-samples/awsome-distributed-training '
               + '3.test_cases/megatron/nemo/kubernetes/Dockerfile) and set efa: {image: {repository: ..., tag: ...}, awsOfiNccl: 1.13.2}',
       }] else [])
    + (if efaOf(target) != null && std.startsWith(efaOf(target).image.repository, 'nvcr.io/nvidia/') then [{
         code: 'profile.efa-image',
         pointer: ctx.targetPointer + '/efa/image',
         message: 'efa.image ' + efaOf(target).image.repository + ' is a stock NGC image without libfabric/aws-ofi-nccl',
         hint: 'name the image built FROM it with the EFA installer and aws-ofi-nccl',
       }] else [])
    + storage.check(ctx, $.storageBackends),
}
