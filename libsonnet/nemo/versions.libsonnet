// Which NeMo a container runs: the NeMo Framework release of an image
// ("24.07"), and the NVIDIA/NeMo git tag that release ships (versions.json,
// each row citing the NeMo Framework "Software Component Versions" page).
// The same rule as compiler/framework_check.cc NemoRelease(): an NGC
// .../nemo image tagged YY.MM[...], or a tag that embeds "nemoYY.MM"
// (gpu-recipes' pytorch-gpu-nemo-nccl:nemo25.02-gib1.0.5-A4).
local table = import 'nemoc/nemo/versions.json';

local isDigit(c) = c >= '0' && c <= '9';
// "YY.MM" at the start of s when followed by no further digit.
local yymm(s) =
  if std.length(s) >= 5 && isDigit(s[0]) && isDigit(s[1]) && std.primitiveEquals(s[2], '.') && isDigit(s[3]) && isDigit(s[4])
     && (std.primitiveEquals(std.length(s), 5) || !isDigit(s[5]))
  then std.substr(s, 0, 5) else null;

{
  releases: table.releases,

  // "YY.MM" or null when the image does not say.
  release(image)::
    local repository = if std.objectHasEx(image, 'repository', false) then image.repository else '';
    local tag = if std.objectHasEx(image, 'tag', false) then image.tag else '';
    local parts = std.split(repository, '/');
    local name = parts[std.length(parts) - 1];
    // What follows each 'nemo' in the tag (std.findSubstr is Jsonnet code and
    // this runs for every image read; issue #47): split at the occurrences.
    local pieces = std.splitLimit(std.strReplace(tag, 'nemo', '\u0001'), '\u0001', -1);
    local embedded = [yymm(std.join('nemo', pieces[i:])) for i in std.range(1, std.length(pieces) - 1)];
    local found = [r for r in embedded if !std.primitiveEquals(r, null)];
    if std.primitiveEquals(name, 'nemo') && !std.primitiveEquals(yymm(tag), null) then yymm(tag)
    else if std.length(found) > 0 then found[0]
    else null,

  // The NVIDIA/NeMo tag of the image's release, or null (unknown release).
  tag(image)::
    local r = $.release(image);
    if !std.primitiveEquals(r, null) && std.objectHasEx(table.releases, r, false) then table.releases[r].nemo else null,

  // The NeMo-Run row of the image's release (versions.json nemoRun), or
  // null: a release without NeMo 2, or an unknown release (counted as the
  // newest, as atLeast does: the newest row).
  nemoRun(image)::
    local r = $.release(image);
    local rows = [table.releases[k].nemoRun for k in std.objectFields(table.releases)
                  if std.objectHasEx(table.releases[k], 'nemoRun', false)];
    if std.primitiveEquals(r, null) || !std.objectHasEx(table.releases, r, false) then rows[std.length(rows) - 1]
    else if std.objectHasEx(table.releases[r], 'nemoRun', false) then table.releases[r].nemoRun
    else null,

  // Release comparison; an image whose release is unknown counts as newest
  // (a locally built image: nemoc cannot tell, and does not refuse it).
  atLeast(image, release)::
    local r = $.release(image);
    std.primitiveEquals(r, null) || r >= release,

  // The first release in the table at or after `release` ("24.09").
  firstAtLeast(release):: [r for r in std.objectFields(table.releases) if r >= release][0],  // fields are sorted
}
