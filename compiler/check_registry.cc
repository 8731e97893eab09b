#include "check_registry.h"

#include <algorithm>
#include <mutex>
#include <tuple>

#include "stages.h"

namespace nemoc {
namespace {

// Construct on first use: registrations run during static initialization,
// in an order across files the language leaves open.
std::vector<RegisteredCheck>& Registry() {
  static std::vector<RegisteredCheck> registry;
  return registry;
}

}  // namespace

bool RegisterCheck(RegisteredCheck check) {
  std::vector<RegisteredCheck>& registry = Registry();
  check.sequence = static_cast<int>(registry.size());
  registry.push_back(std::move(check));
  return true;
}

std::vector<const RegisteredCheck*> RegisteredChecks(const StageTable& stages) {
  std::vector<const RegisteredCheck*> checks;
  for (const auto& check : Registry()) checks.push_back(&check);
  auto position = [&](const RegisteredCheck& c) -> size_t {
    if (c.scope != RegisteredCheck::Scope::kStage) return 0;
    const auto& all = stages.stages();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].key == c.key) return i;
    }
    return all.size();
  };
  // An engine's checks by its name (a stage's key sorts by position instead).
  auto name = [](const RegisteredCheck& c) {
    return c.scope == RegisteredCheck::Scope::kEngine ? c.key : std::string();
  };
  std::sort(checks.begin(), checks.end(), [&](const RegisteredCheck* a, const RegisteredCheck* b) {
    return std::make_tuple(static_cast<int>(a->scope), position(*a), name(*a), a->file, a->sequence) <
           std::make_tuple(static_cast<int>(b->scope), position(*b), name(*b), b->file, b->sequence);
  });
  return checks;
}

}  // namespace nemoc
