// What a target's cluster already runs (issue #43, field review D4/B22,
// decision F12): the profile's defaults -- how its clusters are usually
// built (profile.clusterHas) -- with the target's clusterHas over them; false
// means nemoc installs that component after all. nemoc installs nothing for
// a component the cluster runs (platform.libsonnet installed), and one Kueue
// that is already there is not configured by nemoc (kueue.libsonnet bundled).
// Its own file: platform.libsonnet imports kueue.libsonnet, and both read it.
{
  // {name: version} of the components the cluster runs.
  existing(ctx)::
    local merged = ctx.profile.clusterHas(ctx) + (if $.declaredAny(ctx) then ctx.target.clusterHas else {});
    { [n]: merged[n] for n in std.objectFields(merged) if !std.primitiveEquals(merged[n], false) },
  runs(ctx, name):: std.objectHasEx($.existing(ctx), name, false),
  declaredAny(ctx):: std.objectHasEx(ctx.target, 'clusterHas', false),
  // The target itself says (targets[].clusterHas.<name>), not its profile.
  declared(ctx, name):: $.declaredAny(ctx) && std.objectHasEx(ctx.target.clusterHas, name, false),
  // Where the declaration comes from, for SUMMARY.md.
  why(ctx, name)::
    if $.declared(ctx, name) then 'declared in targets[].clusterHas'
    else 'the ' + ctx.profile.name + " profile's default: " + ctx.profile.clusterHasWhy,
  // 'name version, ...': targets naming one cluster must agree
  // (compiler/cluster_bundle.cc compares it).
  text(ctx)::
    local e = $.existing(ctx);
    std.join(', ', [n + ' ' + e[n] for n in std.objectFields(e)]),
}
