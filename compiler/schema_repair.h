// D9, every problem in one run: a spec that fails its schema is repaired the
// way its diagnostics say -- an unknown field renamed to the field its hint
// names, an enum value replaced by the option it only differs from in case,
// anything else invalid removed -- so that the checks after the schema
// (normalization, arithmetic, the libraries', the fit check) can report
// their problems in the same run. The repaired spec only feeds those checks:
// a spec with errors never produces output (compiler.h PreparedSpec.blocked).
#ifndef NEMOC_SCHEMA_REPAIR_H_
#define NEMOC_SCHEMA_REPAIR_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

/// Repairs `root` after `found` (the schema's diagnostics of it). Returns
/// false when a diagnostic cannot be repaired (a missing required field, one
/// without a pointer); `root` may then be partly changed. `defaulted` gets
/// the pointer of each removed value the schema knows: the checks would find
/// a default there the user did not write, so what they report at it is not
/// shown.
/// `placeholder`, when given, names a stand-in for a missing required field
/// (its pointer -> a value its schema accepts, or null for none): the field
/// is then defaulted like a removed value.
/// `moved`, when given, gets (from, to) for each field read under another
/// name or at another place (misspelt, renamed, misplaced): the caller
/// grafts its source position there, so what later checks find at it is
/// located where it was written.
bool RepairSchemaErrors(const std::vector<Diagnostic>& found, nlohmann::json* root,
                        std::vector<std::string>* defaulted,
                        const std::function<nlohmann::json(const std::string&)>& placeholder = nullptr,
                        std::vector<std::pair<std::string, std::string>>* moved = nullptr);

/// Mistake 7 of the review: for an unknown field at `pointer` whose hint is
/// "indent it under 'X'" (dedented below X, a sibling of its object) or
/// "indent it as far as 'X'" (indented into X), the pointer the field belongs
/// at; "" for any other hint.
std::string ReindentedPointer(const std::string& pointer, const std::string& hint);

}  // namespace nemoc

#endif  // NEMOC_SCHEMA_REPAIR_H_
