// 00-base: what every stage of a target relies on. The Kueue objects sized
// from the queued workloads (LocalQueue; ResourceFlavor, ClusterQueue and
// Topology with kueue.clusterObjects) join 00-base in nemoc.libsonnet, after
// the workloads are built (kueue.libsonnet objects()).
local k8s = import 'nemoc/k8s.libsonnet';
local order = import 'nemoc/stages/order.libsonnet';
local storage = import 'nemoc/storage.libsonnet';

{
  dir: order.dir.base,

  files(ctx)::
    k8s.file(self.dir, k8s.namespace(ctx))
    + (
      if ctx.spec.serviceAccount.create
      then k8s.file(self.dir, k8s.serviceAccount(ctx, ctx.profile.serviceAccountAnnotations(ctx)))
      else {}
    )
    + std.foldl(function(acc, o) acc + k8s.file(self.dir, o),
                storage.objects(ctx),
                {}),
}
