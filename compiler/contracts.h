// Written contracts between C++ and the Jsonnet libraries:
// schemas/contracts/normalized-spec.schema.json (what Prepare hands the
// libraries: the normalized spec) and schemas/contracts/expansion.schema.json
// (what one evaluation returns for one spec). The expander checks both at the
// boundary when NEMOC_CHECK_CONTRACTS is set, as the test suite sets it for
// every nemoc it runs (tests/CMakeLists.txt), and in every Debug build (no
// NDEBUG) unless NEMOC_CHECK_CONTRACTS=0; release builds skip the check
// otherwise (its cost is one schema validation of every object).
#ifndef NEMOC_CONTRACTS_H_
#define NEMOC_CONTRACTS_H_

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace nemoc {

class FileReader;

class Contracts {
 public:
#ifdef NDEBUG
  static constexpr bool kCheckedByDefault = false;
#else
  static constexpr bool kCheckedByDefault = true;
#endif
  /// Reads both schemas from `dir` (schemas/contracts of the data directory).
  static std::unique_ptr<Contracts> Open(const std::string& dir, std::string* err,
                                         FileReader* reader = nullptr);
  /// When NEMOC_CHECK_CONTRACTS is set (and not "0"), or unset in a Debug
  /// build (kCheckedByDefault): the data directory's contracts, or nullptr
  /// with `err` when they cannot be read. nullptr and no error otherwise.
  static std::unique_ptr<Contracts> FromEnvironment(const std::string& dir, std::string* err);
  ~Contracts();

  /// True when `normalized` keeps the contract; else `err` lists the first
  /// violations ("/spec/targets/0/profile: ...").
  bool CheckNormalizedSpec(const nlohmann::json& normalized, std::string* err) const;
  /// The same for one spec's expansion result ({"targets": {...}}).
  bool CheckExpansion(const nlohmann::json& expansion, std::string* err) const;

 private:
  struct Impl;
  explicit Contracts(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nemoc

#endif  // NEMOC_CONTRACTS_H_
