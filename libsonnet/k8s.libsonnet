// Small constructors for the Kubernetes objects nemoc emits, and the file
// naming rule of the output tree. No string formatting with '%' here:
// libjsonnet 0.18 implements it in Jsonnet and it costs ~2 ms a call.
{
  // "<dir>/<kind>-<name>.yaml" -> object.
  file(dir, obj):: { [dir + '/' + std.asciiLower(obj.kind) + '-' + obj.metadata.name + '.yaml']: obj },

  // Merges a list of {path: object} maps; a path produced twice is a library bug.
  files(list)::
    std.foldl(function(acc, m)
      acc + {
        [p]: if std.objectHasEx(acc, p, false) then error ('two objects map to the file ' + p) else m[p]
        for p in std.objectFields(m)
      }, list, {}),

  // A name of at most `max` characters: unchanged when it fits, otherwise cut
  // and given an 8-character md5 suffix of the full name, so long names stay
  // distinct, valid and the same on every build (std.md5 is native in 0.18).
  boundedName(name, max)::
    if std.length(name) <= max then name
    else
      local head = std.substr(name, 0, max - 9);
      local trimmed = if std.endsWith(head, '-') || std.endsWith(head, '.') then std.substr(head, 0, std.length(head) - 1) else head;
      trimmed + '-' + std.substr(std.md5(name), 0, 8),

  // The ONE naming rule for immutable workloads (Job, JobSet, PyTorchJob,
  // TrainJob): `base` cut to fit, then '-' and 8 hex digits of the md5 of
  // `determinants` -- everything that decides what the workload does (its
  // pod template, program, config), never the name itself. A changed spec
  // gives a new name, so Argo CD/Flux create a new object and prune the old
  // one instead of failing on an immutable field; an unchanged spec keeps
  // its name and the finished workload is never touched (or re-run).
  // `'' + value` serialises in libjsonnet's C++ manifester (unlike
  // std.manifestJson, which is Jsonnet code); std.md5 is native too.
  contentName(base, max, determinants):: $.hashed(base, max, determinants).name,

  // contentName plus `determinants` as plain data. libjsonnet 0.18
  // re-evaluates an object field on every access, so hashing a workload and
  // then emitting it evaluated it twice; here it is serialised once and
  // std.parseJson (native) turns the text back into a value whose fields
  // cost nothing to read again. Builders that hash what they emit emit
  // `.value` (same data, evaluated once): -25 % of a full-pipeline build.
  hashed(base, max, determinants)::
    local text = '' + determinants;
    local name = $.boundedName(base, max - 9) + '-' + std.substr(std.md5(text), 0, 8);
    local value = std.parseJson(text);
    { name: name, value: value },

  metadata(ctx, name, component=null, namespaced=true)::
    {
      name: name,
      labels: ctx.labels + (if std.primitiveEquals(component, null) then {} else { 'app.kubernetes.io/component': component }),
    }
    + (if namespaced then { namespace: ctx.namespace } else {})
    + (if std.length(ctx.annotations) > 0 then { annotations: ctx.annotations } else {}),

  namespace(ctx):: {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: $.metadata(ctx, ctx.namespace, namespaced=false),
  },

  serviceAccount(ctx, annotations={}):: {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: $.metadata(ctx, ctx.serviceAccountName) + (
      if std.length(annotations) > 0
      then { annotations+: annotations }
      else {}
    ),
  },

  // `data` values may be {'$nemoc.yaml': value}: nemoc's C++ emitter renders
  // them as YAML text (YAML is never built inside Jsonnet).
  configMap(ctx, name, data, component=null):: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: $.metadata(ctx, name, component),
    data: data,
  },

  yamlDocument(value):: { '$nemoc.yaml': value },
  jsonDocument(value):: { '$nemoc.json': value },
  // Protobuf text format (Triton's config.pbtxt), rendered and escaped by
  // compiler/pbtxt_emitter.cc; enum values are marked with pbtxtEnum.
  pbtxtDocument(message):: { '$nemoc.pbtxt': message },
  pbtxtEnum(name):: { '$enum': name },

  // Quantities nemoc itself writes (plain or decimal-suffixed numbers,
  // binary suffixes, millicores) as numbers: memory-like values in bytes,
  // cpu in cores. Not the whole resource.Quantity grammar (no exponents).
  quantitySuffixes:: { Ki: 1024, Mi: 1048576, Gi: 1073741824, Ti: 1099511627776, k: 1000, M: 1000000, G: 1000000000, T: 1000000000000, m: 0.001 },
  quantityAmount(q)::
    if std.isNumber(q) then q
    else
      local isDigit(c) = c >= '0' && c <= '9';
      local n = std.length(q);
      local go(i) = if i < n && (isDigit(q[i]) || std.primitiveEquals(q[i], '.')) then go(i + 1) else i;
      local i = go(0);
      local number = std.parseJson(std.substr(q, 0, i));
      local unit = std.substr(q, i, n - i);
      if std.primitiveEquals(unit, '') then number else number * $.quantitySuffixes[unit],

  // A number back to a quantity: memory-like in the largest exact binary
  // unit, cpu in cores or millicores, counts as numbers.
  quantityText(resource, value)::
    if std.primitiveEquals(resource, 'cpu') then (
      local milli = std.round(value * 1000);
      if milli % 1000 == 0 then std.toString(milli / 1000) else std.toString(milli) + 'm'
    ) else if std.primitiveEquals(resource, 'memory') || std.startsWith(resource, 'hugepages-') || std.primitiveEquals(resource, 'ephemeral-storage') then (
      local gi = $.quantitySuffixes.Gi;
      local mi = $.quantitySuffixes.Mi;
      if value % gi == 0 then std.toString(value / gi) + 'Gi'
      else if value % mi == 0 then std.toString(value / mi) + 'Mi'
      else std.toString(value)
    ) else value,

  // A non-negative number as short decimal text (at most 6 fractional
  // digits): std.toString(0.9) is "0.90000000000000002" in libjsonnet 0.18.
  // Arithmetic only: std.rstripChars slices strings in Jsonnet code and was
  // 12 % of a whole-pipeline build.
  decimal(x)::
    local scaled = std.floor(x * 1000000 + 0.5);
    local whole = std.floor(scaled / 1000000);
    local fraction = scaled - whole * 1000000;
    // [digits without trailing zeros, how many of the 6 places they fill]
    local strip(f, places) =
      if f - std.floor(f / 10) * 10 != 0 then [f, places] else strip(std.floor(f / 10), places - 1) tailstrict;
    local significant = if std.primitiveEquals(fraction, 0) then [0, 0] else strip(fraction, 6);
    local digits = std.toString(significant[0]);
    local zeros = ['', '0', '00', '000', '0000', '00000'][significant[1] - std.length(digits)];
    if std.primitiveEquals(fraction, 0) then std.toString(whole)
    else std.toString(whole) + '.' + zeros + digits,

  // A Go duration (schemas/project.schema.json #/definitions/duration:
  // 30m, 2h, 1h30m, 1.5h, 90s) in whole seconds, rounded up: what
  // activeDeadlineSeconds takes.
  durationSeconds(d)::
    local unit = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
    local isNum(c) = std.primitiveEquals(c, '.') || (c >= '0' && c <= '9');
    // [[number text, unit text], ...], the parts of d in order.
    local parts = std.foldl(function(acc, c)
      local last = if std.primitiveEquals(std.length(acc), 0) then null else acc[std.length(acc) - 1];
      if isNum(c) then
        (if !std.primitiveEquals(last, null) && std.primitiveEquals(last[1], '') then acc[:std.length(acc) - 1] + [[last[0] + c, '']] else acc + [[c, '']])
      else acc[:std.length(acc) - 1] + [[last[0], last[1] + c]], std.stringChars(d), []);
    local seconds = std.foldl(function(total, p) total + std.parseJson(p[0]) * unit[p[1]], parts, 0);
    std.max(1, std.ceil(seconds - 1e-9)),

  // Sorted strings without duplicates, like std.set, which sorts in Jsonnet
  // code (std.sort); object fields are sorted by libjsonnet's C++. The object
  // is one native parseJson of the strings as JSON keys (a later duplicate
  // overwrites), not a chain of one extension per string (issue #47).
  stringSet(strings)::
    if std.primitiveEquals(std.length(strings), 0) then []
    else std.objectFields(std.parseJson('{' + std.join(':0,', [$.jsonText(s) for s in strings]) + ':0}')),

  // JSON text of a value: libjsonnet's native serialisation of a one-element
  // array, brackets dropped (std.manifestJsonEx is Jsonnet code).
  jsonText(v):: local text = '' + [v]; std.substr(text, 1, std.length(text) - 2),

  // {NAME: value} -> [{name, value}] sorted by name (deterministic).
  // A spec env value is a string, or {secretKeyRef: {name, key}}: the
  // kubelet reads the Secret's key when the pod starts, so the value never
  // enters the tree (schemas/project.schema.json envMap).
  envList(env):: [
    if std.isObject(env[k]) then {
      name: k,
      valueFrom: { secretKeyRef: { name: env[k].secretKeyRef.name, key: env[k].secretKeyRef.key } },
    } else { name: k, value: env[k] }
    for k in std.objectFields(env)
  ],

  // Image reference: repository:tag, pinned by digest when one is given.
  imageRef(image)::
    image.repository + ':' + image.tag + (if std.objectHasEx(image, 'digest', false) then '@' + image.digest else ''),
}
