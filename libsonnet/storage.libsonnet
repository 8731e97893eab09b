// Shared volumes: a spec volume (one backend) -> pod volume + mount.
// Cloud backends (fsxLustre, s3, gcs) belong to their profiles.
{
  // The Kubernetes volume source for a generic backend.
  volumeSource(volume)::
    if std.objectHas(volume, 'nfs') then
      { nfs: { server: volume.nfs.server, path: volume.nfs.path, readOnly: volume.nfs.readOnly } }
    else if std.objectHas(volume, 'pvc') then
      { persistentVolumeClaim: { claimName: volume.pvc.claimName } }
    else if std.objectHas(volume, 'hostPath') then
      { hostPath: { path: volume.hostPath.path, type: 'Directory' } }
    else error 'storage backend not handled by the generic storage library',

  subPath(volume)::
    if std.objectHas(volume, 'pvc') && std.objectHas(volume.pvc, 'subPath') then { subPath: volume.pvc.subPath } else {},

  // Volumes and mounts for the target's resolved storage (results, and data
  // when it is a separate volume).
  pod(storage):: {
    local names = ['results'] + (if storage.separateData then ['data'] else []),
    volumes: [{ name: n } + $.volumeSource(storage[n]) for n in names],
    mounts: [{ name: n, mountPath: storage[n].mountPath } + $.subPath(storage[n]) for n in names],
  },
}
