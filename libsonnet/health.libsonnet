// How the GitOps engines judge a run-to-completion workload kind: the health
// record a runtime's workload.health holds (runtime.libsonnet) and
// gitops.libsonnet's own kinds (coreWorkloads). The record is code:
//
//   suspend:   JSON pointer of the suspend field Kueue flips (Argo CD
//              ignores differences there, gitops.libsonnet ignoreDifferences),
//              or null for a kind nothing suspends (a Volcano Job)
//   lua:       Argo CD's health check, a Lua 5.1 script over `obj` returning
//              hs = {status, message} (argocd-cm
//              resource.customizations.health.<group>_<Kind>; argo-cd
//              docs/operator-manual/health.md). Progressing while it runs,
//              Suspended while Kueue holds it, Healthy once finished, Degraded
//              once failed: the next stage waits on it.
//   cel:       Flux's, {current, failed[, inProgress]} CEL expressions over
//              the object (kustomize-controller healthCheckExprs), or null:
//              Flux's own status readers judge the kind (batch/v1 Job).
//   mutatedBy: (optional) JSON pointers of fields other controllers' webhooks
//              write at creation (Argo CD neither compares nor re-applies them).
//
// conditions() writes the record for the common case, a kind that reports
// its end as terminal status conditions; a kind that reports otherwise (a
// phase field, say) writes lua and cel itself.
{
  conditions(suspend, success, failure, cel=true, mutatedBy=null)::
    {
      suspend: suspend,
      lua: 'hs = {}\n'
           + 'hs.status = "Progressing"\n'
           + 'hs.message = "waiting for the workload to finish"\n'
           + 'if ' + $.luaSuspended(suspend) + ' then\n'
           + '  hs.status = "Suspended"\n'
           + '  hs.message = "suspended (waiting for Kueue admission)"\n'
           + 'end\n'
           + 'if obj.status ~= nil and obj.status.conditions ~= nil then\n'
           + '  for _, c in ipairs(obj.status.conditions) do\n'
           + '    if c.type == "' + failure + '" and c.status == "True" then\n'
           + '      hs.status = "Degraded"\n'
           + '      hs.message = c.message or "' + failure + '"\n'
           + '      return hs\n'
           + '    end\n'
           + '    if c.type == "' + success + '" and c.status == "True" then\n'
           + '      hs.status = "Healthy"\n'
           + '      hs.message = c.message or "' + success + '"\n'
           + '    end\n'
           + '  end\n'
           + 'end\n'
           + 'return hs\n',
      // The conditions are the workload's terminal ones; anything else is
      // progress. has(status.conditions): a running TrainJob (Trainer removed
      // its Created condition, kubeflow/trainer#2621) or a JobSet that was
      // never suspended has a status without conditions, and selecting a
      // missing key is an evaluation error, which Flux reads Unknown for the
      // whole run (fluxcd/pkg runtime v0.110.1 runtime/cel/expression.go:70-127
      // parses without declarations and evaluates over the object; cli-utils
      // statusreaders/common.go:181-186). Only an object without any status
      // (the seconds before its controller's first reconcile) still reads
      // Unknown (field review C25; replay scenario C25-health-of-new-objects).
      cel: if cel then {
        current: "has(status.conditions) && status.conditions.exists(e, e.type == '" + success + "' && e.status == 'True')",
        failed: "has(status.conditions) && status.conditions.exists(e, e.type == '" + failure + "' && e.status == 'True')",
      } else null,
    } + (if std.primitiveEquals(mutatedBy, null) then {} else { mutatedBy: mutatedBy }),

  // The Lua test that the field at JSON pointer `suspend` is true, every
  // object on its way checked for nil. The built-in kinds' two pointers keep
  // the test they always had (one line for both, so argocd-cm is unchanged).
  luaSuspended(suspend)::
    if std.member(['/spec/suspend', '/spec/runPolicy/suspend'], suspend) then
      'obj.spec ~= nil and (obj.spec.suspend == true or (obj.spec.runPolicy ~= nil and obj.spec.runPolicy.suspend == true))'
    else
      local tokens = [std.strReplace(std.strReplace(t, '~1', '/'), '~0', '~') for t in std.split(suspend, '/')[1:]];
      local path(n) = 'obj' + std.join('', ['["' + std.strReplace(std.strReplace(t, '\\', '\\\\'), '"', '\\"') + '"]' for t in tokens[:n]]);
      std.join(' and ', [path(n) + ' ~= nil' for n in std.range(1, std.length(tokens) - 1)] + [path(std.length(tokens)) + ' == true']),

  // A record in the form runtimes wrote before health was code -- {suspend,
  // success, failure, cel: bool, mutatedBy?} -- as code, so such a --jpath
  // runtime keeps working; a record in neither form is an error naming the
  // runtime (nemoc.libsonnet collects the records).
  normalized(runtime, h)::
    if std.primitiveEquals(h, null) || (std.objectHasEx(h, 'lua', false) && std.objectHasEx(h, 'cel', false)) then h
    else if std.objectHasEx(h, 'success', false) && std.objectHasEx(h, 'failure', false) && std.objectHasEx(h, 'suspend', false) then
      $.conditions(h.suspend, h.success, h.failure, cel=std.get(h, 'cel', false), mutatedBy=std.get(h, 'mutatedBy', null))
    else error ('runtime ' + runtime + ': workload.health needs suspend, lua and cel (libsonnet/health.libsonnet),'
                + ' or suspend, success and failure condition types (runtime.conditionHealth)'),
}
