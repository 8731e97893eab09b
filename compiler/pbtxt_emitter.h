// Writes protobuf text format (Triton's config.pbtxt) from a JSON value, so
// that no library builds text formats by string concatenation. The mapping:
// an object is a message, an array of objects a repeated message field in
// list syntax (`input [ {...}, {...} ]`), an array of scalars `dims: [-1, 1]`,
// a string a double-quoted, escaped string, and {"$enum": "TYPE_INT32"} an
// enum value (a bare identifier). Libraries mark such documents with
// {"$nemoc.pbtxt": message} (libsonnet/k8s.libsonnet).
#ifndef NEMOC_PBTXT_EMITTER_H_
#define NEMOC_PBTXT_EMITTER_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nemoc {

/// Emits `message` (a JSON object) as protobuf text format: deterministic,
/// two-space indentation, `name` first in every message and the other fields
/// in byte order, ending in '\n'. False with `*err` set for what text format
/// cannot say: null, nested arrays, field names that are not identifiers,
/// arrays mixing messages and scalars, malformed enum markers.
bool EmitPbtxt(const nlohmann::json& message, std::string* out, std::string* err);

/// `s` as a protobuf text-format string literal, quotes included: `"` and
/// `\` escaped, \n \r \t by name, other control bytes as three-digit octal;
/// UTF-8 passes through unchanged.
std::string QuotePbtxt(std::string_view s);

}  // namespace nemoc

#endif  // NEMOC_PBTXT_EMITTER_H_
