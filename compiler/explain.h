// `nemoc explain PATH`: the documentation of one spec field, read from the
// input schema (schemas/project.schema.json), in the manner of kubectl explain.
#ifndef NEMOC_EXPLAIN_H_
#define NEMOC_EXPLAIN_H_

#include <string>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

/// Explains the field at dotted `path` ("spec.stages.train.parallelism"; ""
/// is the whole spec): type, default, allowed values, bounds, description and,
/// for objects, the fields below (as a tree with `recursive`). Array items
/// are entered transparently (`spec.targets.kueue`). An unknown field is an
/// error naming the parent and the closest field ("did you mean").
bool Explain(const nlohmann::json& schema, const std::string& path, bool recursive,
             std::string* out, Diagnostics* diags);

}  // namespace nemoc

#endif  // NEMOC_EXPLAIN_H_
