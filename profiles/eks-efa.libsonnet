// eks-efa: Amazon EKS with Elastic Fabric Adapter. GPUs through the NVIDIA
// device plugin or GPU Operator, EFA through aws-efa-k8s-device-plugin
// (vpc.amazonaws.com/efa), FSx for Lustre or Mountpoint for S3 storage, and
// IAM roles for service accounts. Facts: awsome-distributed-training.
local fabrics = import 'nemoc/fabrics.libsonnet';
local k8s = import 'nemoc/k8s.libsonnet';
local platform = import 'nemoc/platform.libsonnet';
local storage = import 'nemoc/storage.libsonnet';
local versions = import 'nemoc/nemo/versions.libsonnet';
local profile = import 'nemoc/profile.libsonnet';

profile + {
  name: 'eks-efa',
  description:: 'Amazon EKS with Elastic Fabric Adapter: GPU model and EFA devices from instanceType, FSx for Lustre or Mountpoint for S3 storage, IAM roles for service accounts (iamRoleArn), an EFA-capable image (efa).',
  // scripts/update-schema-catalogue gives instanceType the instances table as
  // its enum in the editors' schema; nemoc checks it here (checks).
  options:: {
    instanceType: {
      description: 'EC2 instance type of the GPU nodes (eks-efa), e.g. p5.48xlarge.',
      type: 'string',
      maxLength: 63,
      pattern: '^[a-z0-9][a-z0-9.-]*$',
    },
    iamRoleArn: {
      description: 'IAM role for service accounts (eks-efa): the eks.amazonaws.com/role-arn annotation.',
      type: 'string',
      maxLength: 2048,
      pattern: '^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$',
    },
    efa: {
      description: "eks-efa: the EFA-capable image the training and NCCL-test pods run on this target, and its aws-ofi-nccl version. Stock NGC NeMo images carry no libfabric/aws-ofi-nccl (NCCL would fall back to TCP): build one FROM spec.image with the EFA installer and aws-ofi-nccl, as aws-samples/awsome-distributed-training 3.test_cases/megatron/nemo/kubernetes/Dockerfile does. NCCL_NET follows awsOfiNccl (plugin name 'AWS Libfabric' before 1.13.0, 'Libfabric' after), so a missing plugin fails instead of falling back.",
      type: 'object',
      additionalProperties: false,
      required: ['image', 'awsOfiNccl'],
      properties: {
        image: {
          '$ref': '#/definitions/image',
          description: 'The EFA-capable image (built FROM spec.image).',
        },
        nemoRelease: {
          description: "The NeMo Framework release the image is built FROM (25.02), when its tag does not say (a tag holding nemo25.02 does). It must be the training image's release: nemoc writes the training's config and command line for that release.",
          type: 'string',
          pattern: '^[0-9]{2}\\.[0-9]{2}$',
        },
        awsOfiNccl: {
          description: "aws-ofi-nccl version in the image, e.g. 1.13.2 (the awsome NeMo Dockerfile's AWS_OFI_NCCL v1.13.2-aws).",
          type: 'string',
          maxLength: 32,
          pattern: '^v?[0-9]+\\.[0-9]+(\\.[0-9]+)?(-aws)?$',
        },
      },
    },
  },
  starter:: {
    target: 'eks',
    // The instance type's GPU (instances below).
    accelerator: 'h100-80gb',
    storage: '        fsxLustre: {storageClassName: fsx-sc, size: 1200Gi}   # or s3, pvc, nfs\n',
    targetLines: '      instanceType: p5.48xlarge      # 8 × H100 80GB, 32 EFA devices\n'
                 + '      # NCCL over EFA needs libfabric + aws-ofi-nccl, which NGC images lack: build FROM spec.image\n'
                 + '      # with the EFA installer and aws-ofi-nccl (aws-samples/awsome-distributed-training\n'
                 + '      # 3.test_cases/megatron/nemo/kubernetes/Dockerfile), push it, and name it here.\n'
                 + '      efa: {image: {repository: 123456789012.dkr.ecr.us-east-1.amazonaws.com/nemo-efa, tag: nemo25.02-efa}, awsOfiNccl: 1.13.2}\n'
                 + '      # iamRoleArn: arn:aws:iam::123456789012:role/nemo-training   # IRSA for S3\n',
    fabric: '',
    clusterQueue: false,
  },
  defaults: { runtime: 'pytorchjob' },
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
  // GPU instance types a single-node stage may run on (targets[].stageNodes:
  // a 1-GPU engine build and Triton need no p5): the G families' sizes as
  // Amazon EC2's accelerated-computing instance table lists them (g5: A10G,
  // g6: L4, g6e: L40S). The bundle's NVIDIA device plugin selects these and
  // the training types (componentValues, B20); a stage node type outside
  // both would never get nvidia.com/gpu, so it is a located error.
  stageInstances:: [family + '.' + size
                    for family in ['g5', 'g6', 'g6e']
                    for size in ['xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge', '24xlarge', '48xlarge']],
  // A stageNodes entry's instanceType is the node label EKS sets on every node.
  stageNodeSelector(ctx, nodes)::
    (if std.objectHasEx(nodes, 'instanceType', false) then { 'node.kubernetes.io/instance-type': nodes.instanceType } else {})
    + super.stageNodeSelector(ctx, nodes),
  // Every GPU node type an eks-efa cluster schedules nemoc's pods on.
  gpuInstanceTypes:: k8s.stringSet(std.objectFields($.instances) + $.stageInstances),

  // Hugepages for libfabric's bounce buffers, requested only when libfabric
  // uses them (B7): fabrics.efa sets FI_EFA_USE_HUGE_PAGE=0 (os.fork() in data
  // loaders), so a 2Mi-hugepage request would reserve memory for nothing and
  // leave pods Pending on nodes without preallocated hugepages. With hugepages
  // on, the pod requests them with memory (awsome-distributed-training
  // nccl-tests.yaml).
  hugepages: '5120Mi',
  usesHugepages:: !std.primitiveEquals(fabrics.efa.FI_EFA_USE_HUGE_PAGE, '0'),
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
    if major > 1 || (std.primitiveEquals(major, 1) && minor >= 13) then 'Libfabric' else 'AWS Libfabric',

  local instanceOf(ctx) =
    if std.objectHasEx(ctx.target, 'instanceType', false) && std.objectHasEx($.instances, ctx.target.instanceType, false)
    then $.instances[ctx.target.instanceType] else null,

  // The instance type names the node (profile.libsonnet gpuNode): its GPU
  // model and count, from the table above.
  // Every instance type's EFA devices (profile.libsonnet nodeFabric).
  nodeFabric:: { fixed: 'efa' },
  gpuNode:: { option: 'instanceType', values: { [t]: { accelerator: $.instances[t].gpu, gpus: $.instances[t].gpus } for t in std.objectFields($.instances) } },

  // Placement of single-node stage pods (data preparation, evaluation,
  // conversion, engine build, serving): the instance type's GPU nodes and
  // shared storage, no EFA devices.
  localPlacement(ctx)::
    $.placementDefaults(ctx) + {
      nodeSelector: { 'node.kubernetes.io/instance-type': ctx.target.instanceType } + ctx.target.nodeSelector,
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
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
      env: fabrics[$.fabricOf(ctx.target)] + (if !std.primitiveEquals(efaOf(ctx.target), null) then { NCCL_NET: $.ncclNet(efaOf(ctx.target).awsOfiNccl) } else {}),
      // The EFA-capable image runs the multi-node pods (B8).
      [if !std.primitiveEquals(efaOf(ctx.target), null) then 'image']: efaOf(ctx.target).image,
      fabric: 'EFA: ' + instance.efa + ' × vpc.amazonaws.com/efa per ' + ctx.target.instanceType
              + (if $.usesHugepages then ', hugepages-2Mi ' + $.hugepages else ', no hugepages (FI_EFA_USE_HUGE_PAGE=0)')
              + ', libfabric provider efa',
    },

  serviceAccountAnnotations(ctx)::
    if std.objectHasEx(ctx.target, 'iamRoleArn', false) then { 'eks.amazonaws.com/role-arn': ctx.target.iamRoleArn } else {},
  workloadIdentity(ctx):: std.objectHasEx(ctx.target, 'iamRoleArn', false),

  // EKS has no NFD and no GPU Operator here: the NVIDIA and EFA device plugins.
  // The default is to install them: with the EKS-optimized AL2023 accelerated
  // AMIs "you must install the NVIDIA Kubernetes device plugin" (Amazon EKS
  // user guide, "Install Kubernetes device plugin for GPUs"). eksctl installs
  // it by itself for GPU node groups, as a static DaemonSet, and the
  // Bottlerocket AMIs carry it. A cluster built that way declares
  // clusterHas: {'nvidia-device-plugin': <version>} (issue #43).
  platform(ctx):: ['nvidia-device-plugin', 'efa-device-plugin'],
  componentValues(ctx, name)::
    if std.primitiveEquals(name, 'nvidia-device-plugin') then {
      // The chart's default affinity needs NFD labels (pci-10de.present,
      // NVIDIA/k8s-device-plugin@v0.20.0:deployments/helm/nvidia-device-plugin/values.yaml:64-85);
      // EKS has no NFD, so select the GPU instance types instead: every one
      // the profile knows, not only the target's, because one device plugin
      // serves every target naming the cluster (decision F3) -- the training
      // types and the G types single-node stages may run on (stageNodes: the
      // engine build and Triton on g6e; B20).
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{
        matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: $.gpuInstanceTypes }],
      }] } } },
    }
    else if std.primitiveEquals(name, 'efa-device-plugin') then {
      // GPU nodes are tainted nvidia.com/gpu (this profile tolerates it); the
      // chart tolerates nothing (aws/eks-charts@v0.0.242:stable/aws-efa-k8s-device-plugin/values.yaml:332).
      tolerations: [
        { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'aws.amazon.com/efa', operator: 'Exists', effect: 'NoSchedule' },
      ],
    }
    else {},
  // EKS accelerated AMIs carry the NVIDIA driver.
  shipsGpuDriver:: true,
  // Huge pages only when a pod requests them (B24: none does since B7, FI_EFA_USE_HUGE_PAGE=0).
  prerequisites(ctx):: [
    { what: 'EKS accelerated AMI GPU nodes: NVIDIA driver and container toolkit, EFA kernel driver' + (if $.usesHugepages then ', 2 MiB huge pages' else ''),
      provides: if $.usesHugepages then ['hugepages-2Mi'] else [] },
  ] + (if storage.usesBackend(ctx.storage, 'fsxLustre') then [
    { what: 'Amazon FSx for Lustre CSI driver (EKS add-on aws-fsx-csi-driver, IAM role) and its StorageClass', provides: ['fsx.csi.aws.com'] + platform.storageClasses(ctx, 'fsxLustre', 'fsx-sc')
                + ['PersistentVolumeClaim/' + c for c in storage.existingClaims(ctx.storage, 'fsxLustre')] },
  ] else []) + (if storage.usesBackend(ctx.storage, 's3') then [
    { what: 'Mountpoint for Amazon S3 CSI driver (EKS add-on aws-mountpoint-s3-csi-driver, IAM role)', provides: ['s3.csi.aws.com'] },
  ] else []),

  checks(ctx)::
    local target = ctx.target;
    local instance = instanceOf(ctx);
    local train = if std.objectHasEx(ctx.spec.stages, 'train', false) then ctx.spec.stages.train else null;
    (if !std.objectHasEx(target, 'instanceType', false) then [{
       code: 'profile.instance-type',
       pointer: ctx.targetPointer,
       message: 'eks-efa needs instanceType (the EC2 type of the GPU nodes)',
       hint: 'known types: ' + std.join(', ', std.objectFields($.instances)),
     }]
     else if std.primitiveEquals(instance, null) then [{
       code: 'profile.instance-type',
       pointer: ctx.targetPointer + '/instanceType',
       message: 'unknown EFA instance type ' + target.instanceType,
       hint: 'known types: ' + std.join(', ', std.objectFields($.instances)),
     }]
     // gpusPerNode above the instance's GPUs: nemoc's own check (gpuNode).
     else [])
    // B20: a stage node type the bundle's device plugin does not select never
    // gets nvidia.com/gpu, and its pods stay Pending.
    + [{
         code: 'profile.stage-instance-type',
         pointer: ctx.targetPointer + '/stageNodes/' + stage + '/instanceType',
         message: 'stageNodes.' + stage + ': instance type ' + target.stageNodes[stage].instanceType
                  + " is not a GPU type the cluster bundle's NVIDIA device plugin serves",
         hint: 'GPU types for single-node stages: ' + std.join(', ', $.stageInstances),
       }
       for stage in (if std.objectHasEx(target, 'stageNodes', false) then std.objectFields(target.stageNodes) else [])
       if std.objectHasEx(target.stageNodes[stage], 'instanceType', false)
          && !std.member($.gpuInstanceTypes, target.stageNodes[stage].instanceType)]
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
    + (if !std.primitiveEquals(train, null) && std.primitiveEquals(efaOf(target), null) then [{
         code: 'profile.efa-image',
         pointer: ctx.targetPointer,
         message: 'eks-efa training needs an EFA-capable image: ' + k8s.imageRef(train.image)
                  + ' carries no libfabric/aws-ofi-nccl, so NCCL would fall back to TCP sockets',
         hint: 'build FROM ' + k8s.imageRef(train.image) + ' with the EFA installer and aws-ofi-nccl (aws-samples/awsome-distributed-training '
               + '3.test_cases/megatron/nemo/kubernetes/Dockerfile) and set efa: {image: {repository: ..., tag: ...}, awsOfiNccl: 1.13.2}',
       }] else [])
    // D8: the training runs the EFA image, but its config, command line and
    // every release rule (NeMo 1 scripts until 25.07, a recipe's first
    // release, fp8 on Blackwell) are the training image's: the EFA image must
    // be built from that release, declared (efa.nemoRelease) or in its tag.
    + (if !std.primitiveEquals(train, null) && !std.primitiveEquals(efaOf(target), null) && !std.startsWith(efaOf(target).image.repository, 'nvcr.io/nvidia/') then
         local efa = efaOf(target);
         local declared = if std.objectHasEx(efa, 'nemoRelease', false) then efa.nemoRelease else null;
         // nemo25.02-efa (versions.libsonnet), or a tag that starts with the release (25.02-efa).
         local tag = efa.image.tag;
         local digit(c) = c >= '0' && c <= '9';
         local leading = if std.length(tag) >= 5 && digit(tag[0]) && digit(tag[1]) && std.primitiveEquals(tag[2], '.') && digit(tag[3]) && digit(tag[4])
                            && (std.primitiveEquals(std.length(tag), 5) || !digit(tag[5])) then std.substr(tag, 0, 5) else null;
         local fromTag = if !std.primitiveEquals(versions.release(efa.image), null) then versions.release(efa.image) else leading;
         local built = if !std.primitiveEquals(declared, null) then declared else fromTag;
         local wanted = versions.release(train.image);
         if std.primitiveEquals(built, null) then [{
           code: 'profile.efa-release',
           pointer: ctx.targetPointer + '/efa/image/tag',
           message: 'efa.image ' + k8s.imageRef(efa.image) + ' does not say which NeMo release it is built from; nemoc writes the training for '
                    + (if !std.primitiveEquals(wanted, null) then 'NeMo ' + wanted + ' (' + k8s.imageRef(train.image) + ')' else k8s.imageRef(train.image)),
           hint: 'set efa.nemoRelease: "' + (if !std.primitiveEquals(wanted, null) then wanted else 'YY.MM') + '", or tag the image with it (nemo' + (if !std.primitiveEquals(wanted, null) then wanted else 'YY.MM') + '-efa)',
         }]
         else if !std.primitiveEquals(wanted, null) && built != wanted then [{
           code: 'profile.efa-release',
           pointer: ctx.targetPointer + (if !std.primitiveEquals(declared, null) then '/efa/nemoRelease' else '/efa/image/tag'),
           message: 'efa.image is built from NeMo ' + built + (if !std.primitiveEquals(declared, null) then ' (efa.nemoRelease)' else ' (its tag)')
                    + ', but the training is written for NeMo ' + wanted + ' (' + k8s.imageRef(train.image) + '), whose config and command line the EFA image would run',
           hint: 'build the EFA image FROM ' + k8s.imageRef(train.image) + ', or set the training image to nvcr.io/nvidia/nemo:' + built,
         }]
         else []
       else [])
    + (if !std.primitiveEquals(efaOf(target), null) && std.startsWith(efaOf(target).image.repository, 'nvcr.io/nvidia/') then [{
         code: 'profile.efa-image',
         pointer: ctx.targetPointer + '/efa/image',
         message: 'efa.image ' + efaOf(target).image.repository + ' is a stock NGC image without libfabric/aws-ofi-nccl',
         hint: 'name the image built FROM it with the EFA installer and aws-ofi-nccl',
       }] else []),
}
