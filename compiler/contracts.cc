#include "contracts.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "valijson.h"

#include "file_reader.h"
#include "schema_validator.h"

namespace nemoc {

namespace {

struct Schema {
  nlohmann::json json;
  valijson::Schema compiled;
};

bool LoadSchema(FileReader& reader, const std::string& path, Schema* schema, std::string* err) {
  std::string text;
  if (!reader.Read(path, kMaxTableBytes, &text, err)) return false;
  schema->json = nlohmann::json::parse(text, nullptr, false);
  if (schema->json.is_discarded() || !schema->json.is_object()) {
    *err = path + " is not a JSON object";
    return false;
  }
  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(schema->json);
    parser.populateSchema(adapter, schema->compiled);
  } catch (const std::exception& e) {
    *err = path + ": " + e.what();
    return false;
  }
  return true;
}

bool Check(const Schema& schema, const nlohmann::json& instance, const std::string& what, std::string* err) {
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(instance);
  try {
    if (validator.validate(schema.compiled, adapter, &results)) return true;
  } catch (const std::exception& e) {
    *err = what + ": " + e.what();
    return false;
  }
  // The deepest findings say what is wrong; the wrappers above them repeat it.
  std::vector<std::string> findings;
  valijson::ValidationResults::Error error;
  size_t deepest = 0;
  std::vector<std::pair<size_t, std::string>> all;
  while (results.popError(error)) {
    const std::string pointer = ContextToPointer(error.context);
    all.emplace_back(error.context.size(), (pointer.empty() ? "/" : pointer) + ": " + error.description);
    deepest = std::max(deepest, error.context.size());
  }
  for (const auto& [depth, text] : all) {
    if (depth == deepest && findings.size() < 5) findings.push_back(text);
  }
  *err = what + " breaks its contract";
  for (const auto& f : findings) *err += "; " + f;
  return false;
}

}  // namespace

struct Contracts::Impl {
  Schema normalized;
  Schema expansion;
};

Contracts::Contracts(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Contracts::~Contracts() = default;

std::unique_ptr<Contracts> Contracts::Open(const std::string& dir, std::string* err, FileReader* reader) {
  auto impl = std::make_unique<Impl>();
  FileReader& files = reader != nullptr ? *reader : RealFiles();
  if (!LoadSchema(files, dir + "/normalized-spec.schema.json", &impl->normalized, err) ||
      !LoadSchema(files, dir + "/expansion.schema.json", &impl->expansion, err)) {
    return nullptr;
  }
  return std::unique_ptr<Contracts>(new Contracts(std::move(impl)));
}

std::unique_ptr<Contracts> Contracts::FromEnvironment(const std::string& dir, std::string* err) {
  const char* value = std::getenv("NEMOC_CHECK_CONTRACTS");
  // Issue #48 item 4: a Debug build (no NDEBUG) checks them unless told not
  // to (NEMOC_CHECK_CONTRACTS=0); a release build only when asked.
  if (value == nullptr || std::string(value).empty()) return kCheckedByDefault ? Open(dir, err) : nullptr;
  if (std::string(value) == "0") return nullptr;
  return Open(dir, err);
}

bool Contracts::CheckNormalizedSpec(const nlohmann::json& normalized, std::string* err) const {
  return Check(impl_->normalized, normalized, "the normalized spec (schemas/contracts/normalized-spec.schema.json)", err);
}

bool Contracts::CheckExpansion(const nlohmann::json& expansion, std::string* err) const {
  return Check(impl_->expansion, expansion, "the libraries' expansion (schemas/contracts/expansion.schema.json)", err);
}

}  // namespace nemoc
