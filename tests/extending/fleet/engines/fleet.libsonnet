// Rancher Fleet as a GitOps engine of your own (libsonnet/engine.libsonnet;
// its description, settings schema included, is fleet.json beside it: nemoc's
// table of engines gives this object its title and notes from there). Per
// target, gitops/fleet/ holds one GitRepo whose paths are the target's stage
// directories; Fleet makes each a bundle (a Helm release) of its own.
local gitops = import 'nemoc/gitops.libsonnet';

(import 'nemoc/engine.libsonnet') + {
  name:: 'fleet',
  dirs:: ['gitops/fleet'],
  namespace(ctx):: ctx.spec.gitops.fleet.namespace,
  // Fleet deploys a bundle as a Helm release: Helm keeps an object with this
  // annotation when the release is uninstalled or upgraded without it.
  keepAnnotations:: { 'helm.sh/resource-policy': 'keep' },

  files(ctx, files):: {
    ['gitops/fleet/gitrepo-' + gitops.targetName(ctx) + '.yaml']: {
      apiVersion: 'fleet.cattle.io/v1alpha1',
      kind: 'GitRepo',
      metadata: {
        name: gitops.targetName(ctx),
        namespace: ctx.spec.gitops.fleet.namespace,
        labels: gitops.labels(ctx),
      },
      spec: {
        repo: ctx.spec.gitops.repoURL,
        branch: ctx.spec.gitops.revision,
        pollingInterval: ctx.spec.gitops.fleet.pollingInterval,
        paths: [gitops.sourcePath(ctx) + '/' + d for d in gitops.stageDirs(files)],
      } + (if std.objectHasEx(ctx.spec.gitops.fleet, 'clientSecretName', false)
           then { clientSecretName: ctx.spec.gitops.fleet.clientSecretName } else {}),
    },
  },

  clusterBootstrap(ctx):: 'none: ' + self.clusterBootstrapNote,
  bootstrap(ctx):: [
    gitops.applyCommand(gitops.sourcePath(ctx) + '/gitops/fleet') + ' (the GitRepo; Fleet deploys every stage directory from then on)',
  ],
  remove(ctx, kept):: [
    'Fleet: `kubectl delete gitrepo ' + gitops.targetName(ctx) + ' -n ' + ctx.spec.gitops.fleet.namespace
    + '` uninstalls every bundle; ' + kept + ' (`helm.sh/resource-policy: keep`).',
  ],

  // Fleet's bundles have no order among themselves unless a fleet.yaml says
  // dependsOn: a pipeline of several stages would start them all at once.
  diagnostics(ctx)::
    local stages = std.length(std.objectFields(ctx.spec.stages));
    if stages > 1 then [{
      code: 'fleet.unordered',
      pointer: '/spec/gitops/engines',
      severity: 'warning',
      message: 'Fleet deploys each of the ' + stages + ' stages as a bundle of its own, all at once: it does not wait for one stage to finish before the next',
      hint: 'deliver a pipeline of several stages with argocd or flux',
    }] else [],
}
