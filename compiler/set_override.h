// `--set path=value`: a one-build change to the spec, validated like the file.
#ifndef NEMOC_SET_OVERRIDE_H_
#define NEMOC_SET_OVERRIDE_H_

#include <string>

#include "diagnostic.h"
#include "source_map.h"

namespace nemoc {

/// Applies "spec.stages.train.nodes=4" (dotted path; "[i]" or ".i" for list
/// items; the value is read as a YAML flow scalar, list or mapping) to `doc`.
/// Missing intermediate mappings are created. Errors name the flag.
bool ApplySetOverride(const std::string& assignment, Document* doc, Diagnostics* diags);

/// "spec.targets[0].name" -> "/spec/targets/0/name"; false when malformed.
bool DottedToPointer(const std::string& dotted, std::string* pointer);

}  // namespace nemoc

#endif  // NEMOC_SET_OVERRIDE_H_
