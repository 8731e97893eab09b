// Shared volumes: every storage backend a spec can name, in one place.
// A target's storage is {results, data, separateData}; each volume has one
// backend. Pod volumes are always called "results" and "data" (valid names
// whatever the bucket is called). Profiles say which backends they accept.
local k8s = import 'nemoc/k8s.libsonnet';

{
  backends: ['nfs', 'pvc', 'hostPath', 'fsxLustre', 's3', 'gcs'],

  // The first backend the volume names: native tests only (issue #47: read for
  // every volume of every pod); what follows the chain is the same test over
  // $.backends, for a backend added there and not here.
  backendOf(volume)::
    if std.objectHasEx(volume, 'nfs', false) then 'nfs'
    else if std.objectHasEx(volume, 'pvc', false) then 'pvc'
    else if std.objectHasEx(volume, 'hostPath', false) then 'hostPath'
    else if std.objectHasEx(volume, 'fsxLustre', false) then 'fsxLustre'
    else if std.objectHasEx(volume, 's3', false) then 's3'
    else if std.objectHasEx(volume, 'gcs', false) then 'gcs'
    else [b for b in $.backends if std.objectHasEx(volume, b, false)][0],
  // Whether any volume of a storage section uses `backend` (a profile's prerequisites).
  usesBackend(storage, backend):: std.length([n for n in $.volumeNames(storage) if std.primitiveEquals($.backendOf(storage[n]), backend)]) > 0,
  // PersistentVolumeClaims of `backend` the pods mount but nemoc does not make
  // (pvc.claimName, fsxLustre.claimName): the cluster must already have them.
  existingClaims(storage, backend):: k8s.stringSet([
    storage[n][backend].claimName
    for n in $.volumeNames(storage)
    if std.primitiveEquals($.backendOf(storage[n]), backend) && std.objectHasEx(storage[n][backend], 'claimName', false)
  ]),

  // schemas relativePath allows at most one trailing '/'.
  withoutTrailingSlash(path)::
    local n = std.length(path);
    if n > 0 && path[n - 1] == '/' then std.substr(path, 0, n - 1) else path,

  volumeNames(storage):: ['results'] + (if storage.separateData then ['data'] else []),

  // Objects some backends need next to the pods (PVCs, a static PV).
  claimName(ctx, name):: ctx.project + '-' + name,

  volumeSource(ctx, name, volume)::
    local backend = $.backendOf(volume);
    if std.primitiveEquals(backend, 'nfs') then
      { nfs: { server: volume.nfs.server, path: volume.nfs.path, readOnly: volume.nfs.readOnly } }
    else if std.primitiveEquals(backend, 'pvc') then
      { persistentVolumeClaim: { claimName: volume.pvc.claimName } }
    else if std.primitiveEquals(backend, 'hostPath') then
      { hostPath: { path: volume.hostPath.path, type: 'Directory' } }
    else if std.primitiveEquals(backend, 'fsxLustre') then
      { persistentVolumeClaim: { claimName: if std.objectHasEx(volume.fsxLustre, 'claimName', false)
                                 then volume.fsxLustre.claimName else $.claimName(ctx, name) } }
    else if std.primitiveEquals(backend, 's3') then
      { persistentVolumeClaim: { claimName: $.claimName(ctx, name) } }
    else if std.primitiveEquals(backend, 'gcs') then
      {
        csi: {
          driver: 'gcsfuse.csi.storage.gke.io',
          volumeAttributes: {
            bucketName: volume.gcs.bucket,
            mountOptions: 'implicit-dirs' + (if std.objectHasEx(volume.gcs, 'onlyDir', false) then ',only-dir=' + volume.gcs.onlyDir else ''),
          },
        },
      }
    else error 'unknown storage backend',

  subPath(volume)::
    if std.objectHasEx(volume, 'pvc', false) && std.objectHasEx(volume.pvc, 'subPath', false) then { subPath: volume.pvc.subPath } else {},

  // Volumes and mounts for the target's storage.
  pod(ctx):: {
    local storage = ctx.storage,
    volumes: [{ name: n } + $.volumeSource(ctx, n, storage[n]) for n in $.volumeNames(storage)],
    mounts: [{ name: n, mountPath: storage[n].mountPath } + $.subPath(storage[n]) for n in $.volumeNames(storage)],
    usesGcsFuse: std.length([n for n in $.volumeNames(storage) if std.primitiveEquals($.backendOf(storage[n]), 'gcs')]) > 0,
  },

  // FSx for Lustre without an existing claim: a dynamically provisioned RWX PVC.
  // S3: Mountpoint for Amazon S3 is statically provisioned (a PV per bucket).
  objects(ctx)::
    std.flattenArrays([
      local volume = ctx.storage[n];
      local backend = $.backendOf(volume);
      if std.primitiveEquals(backend, 'fsxLustre') && !std.objectHasEx(volume.fsxLustre, 'claimName', false) then [{
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: k8s.metadata(ctx, $.claimName(ctx, n)),
        spec: {
          accessModes: ['ReadWriteMany'],
          storageClassName: if std.objectHasEx(volume.fsxLustre, 'storageClassName', false) then volume.fsxLustre.storageClassName else 'fsx-sc',
          resources: { requests: { storage: if std.objectHasEx(volume.fsxLustre, 'size', false) then volume.fsxLustre.size else '1200Gi' } },
        },
      }]
      else if std.primitiveEquals(backend, 's3') then
        local pvName = ctx.namespace + '-' + $.claimName(ctx, n);
        [
          {
            apiVersion: 'v1',
            kind: 'PersistentVolume',
            metadata: k8s.metadata(ctx, pvName, namespaced=false),
            spec: {
              capacity: { storage: '1200Gi' },  // ignored by the driver; required by the API
              accessModes: ['ReadWriteMany'],
              persistentVolumeReclaimPolicy: 'Retain',
              storageClassName: '',
              claimRef: { namespace: ctx.namespace, name: $.claimName(ctx, n) },
              mountOptions: ['allow-delete', 'allow-overwrite']
                            + (if std.objectHasEx(volume.s3, 'region', false) then ['region ' + volume.s3.region] else [])
                            // B10: Mountpoint wants `prefix <p>/` with exactly one trailing slash; the
                            // schema's relativePath allows `sft/`, so strip before appending (not `sft//`).
                            // awslabs/mountpoint-s3 v1.23.0 doc/CONFIGURATION.md:151, mountpoint-s3-fs/src/s3/prefix.rs:8.
                            + (if std.objectHasEx(volume.s3, 'prefix', false) then ['prefix ' + $.withoutTrailingSlash(volume.s3.prefix) + '/'] else []),
              csi: {
                driver: 's3.csi.aws.com',
                volumeHandle: pvName,
                // With an IAM role for the target's service account (the profile's
                // workloadIdentity: eks-efa's iamRoleArn), Mountpoint mounts
                // with the pod's credentials, not the driver's role (B9;
                // awslabs/mountpoint-s3-csi-driver v2.7.0 docs/CONFIGURATION.md:43,375).
                volumeAttributes: { bucketName: volume.s3.bucket }
                                  + (if ctx.profile.workloadIdentity(ctx) then { authenticationSource: 'pod' } else {}),
              },
            },
          },
          {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: k8s.metadata(ctx, $.claimName(ctx, n)),
            spec: {
              accessModes: ['ReadWriteMany'],
              storageClassName: '',
              volumeName: pvName,
              resources: { requests: { storage: '1200Gi' } },
            },
          },
        ]
      else []
      for n in $.volumeNames(ctx.storage)
    ]),

  describe(volume)::
    local backend = $.backendOf(volume);
    (if std.primitiveEquals(backend, 'nfs') then 'NFS ' + volume.nfs.server + ':' + volume.nfs.path
     else if std.primitiveEquals(backend, 'pvc') then 'PVC ' + volume.pvc.claimName
     else if std.primitiveEquals(backend, 'hostPath') then 'hostPath ' + volume.hostPath.path
     else if std.primitiveEquals(backend, 'fsxLustre') then 'FSx for Lustre (fsx.csi.aws.com)'
                                         + (if std.objectHasEx(volume.fsxLustre, 'claimName', false) then ' PVC ' + volume.fsxLustre.claimName else '')
     else if std.primitiveEquals(backend, 's3') then 'S3 bucket ' + volume.s3.bucket + ' (Mountpoint for Amazon S3 CSI, read-only use)'
     else 'GCS bucket ' + volume.gcs.bucket + ' (Cloud Storage FUSE CSI)')
    + ' at ' + volume.mountPath,

  describeAll(ctx):: {
    [n]: $.describe(ctx.storage[n])
    for n in $.volumeNames(ctx.storage)
  },

  // Diagnostics for backends a profile cannot mount.
  check(ctx, allowed)::
    // B9: Mountpoint for S3 does not rename or append on general-purpose buckets
    // (awslabs/mountpoint-s3 v1.23.0 doc/SEMANTICS.md:8,18-21): checkpoints and
    // results (written by every stage) cannot live there; datasets can.
    (if std.objectHasEx(ctx.storage, 'results', false) && std.primitiveEquals($.backendOf(ctx.storage.results), 's3') then [{
       code: 'storage.s3-results',
       pointer: ctx.storagePointer + '/results/s3',
       atKey: true,
       message: 'Mountpoint for S3 cannot hold results: checkpoint saving renames files, which Mountpoint refuses on general-purpose buckets (awslabs/mountpoint-s3 v1.23.0 doc/SEMANTICS.md:8)',
       hint: 'put results on fsxLustre, pvc or nfs; keep s3 for the data volume',
     }] else [])
    + [
    {
      code: 'profile.storage',
      pointer: ctx.storagePointer + '/' + n + '/' + $.backendOf(ctx.storage[n]),
      atKey: true,
      message: 'profile ' + ctx.target.profile + ' cannot mount ' + $.backendOf(ctx.storage[n]) + ' storage',
      hint: 'use one of: ' + std.join(', ', allowed),
    }
    for n in $.volumeNames(ctx.storage)
    if !std.member(allowed, $.backendOf(ctx.storage[n]))
  ],
}
