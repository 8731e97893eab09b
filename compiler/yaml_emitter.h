// Writes Kubernetes objects as YAML text, directly, instead of through
// YAML::Emitter: yaml-cpp's emitter leaves strings such as `yes`, `0123` or
// `1:30` unquoted (a YAML 1.1 reader such as kubectl's turns them into bools
// and numbers), cannot choose a literal block's chomping indicator, and does
// not indent sequences the way kubectl and helm do. Output is deterministic so
// that rendered manifests diff cleanly.
#ifndef NEMOC_YAML_EMITTER_H_
#define NEMOC_YAML_EMITTER_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace nemoc {

/// Emits one Kubernetes object (or any JSON value) as one YAML document,
/// deterministic, LF line endings, ending in exactly one '\n', no leading
/// '---'. Block style with kubectl's sequence indentation; at the top level
/// `apiVersion`, `kind`, `metadata` come first, inside the top-level metadata
/// `name`, `namespace`, `labels`, `annotations`; a mapping that is a sequence
/// element starts with `name`; all other keys are in byte order. Strings that
/// contain invalid UTF-8 cannot be written exactly in YAML; each invalid byte
/// becomes U+FFFD (as nlohmann's `error_handler_t::replace` does).
std::string EmitYaml(const nlohmann::json& value);

/// True when a plain (unquoted) scalar with this text would be read by a
/// YAML 1.1 OR YAML 1.2 reader as something other than this exact string, or
/// is not a valid plain scalar at all. Errs towards true.
bool NeedsQuotes(std::string_view s) noexcept;

/// Shortest text that round-trips the double exactly (std::to_chars);
/// integral values in int64 range print without a decimal point or exponent.
/// Other values keep a '.' in the mantissa and a sign in the exponent
/// (`1.0e-07`) because YAML 1.1 readers take `1e-07` for a string.
/// NaN and infinities (impossible in JSON) print as `.nan`, `.inf`, `-.inf`.
std::string FormatNumber(double d);

/// `s` as a single-line YAML double-quoted scalar, quotes included.
std::string DoubleQuoteYaml(std::string_view s);

/// `key` as it is written before ':' in a block mapping: plain when
/// NeedsQuotes is false, double-quoted otherwise. (EmitYaml writes keys longer
/// than YAML's 1024-character implicit-key limit as `? key` / `: value`.)
std::string FormatYamlKey(std::string_view key);

}  // namespace nemoc

#endif  // NEMOC_YAML_EMITTER_H_
