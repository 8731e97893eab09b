#include "facts.h"

#include <set>

namespace nemoc {

namespace {

// Reads one member of an object; `where` names it in errors.
class Reader {
 public:
  Reader(const nlohmann::json& object, std::string where, std::string* err)
      : object_(object), where_(std::move(where)), err_(err) {}

  bool String(const char* key, std::string* out) {
    seen_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) return true;
    if (!it->is_string()) return Fail(key, "a string");
    *out = it->get<std::string>();
    return true;
  }
  bool Strings(const char* key, std::vector<std::string>* out) {
    seen_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) return true;
    if (!it->is_array()) return Fail(key, "an array of strings");
    for (const auto& item : *it) {
      if (!item.is_string()) return Fail(key, "an array of strings");
      out->push_back(item.get<std::string>());
    }
    return true;
  }
  bool Sentences(const char* key, std::vector<std::pair<std::string, std::string>>* out) {
    seen_.insert(key);
    auto it = object_.find(key);
    if (it == object_.end()) return true;
    if (!it->is_object()) return Fail(key, "an object of strings");
    for (const auto& [name, text] : it->items()) {
      if (!text.is_string()) return Fail(key, "an object of strings");
      out->emplace_back(name, text.get<std::string>());
    }
    return true;
  }
  // The object member `key`, or nullptr when absent (false: wrong type).
  bool Object(const char* key, const nlohmann::json** out) {
    seen_.insert(key);
    *out = nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) return true;
    if (!it->is_object()) return Fail(key, "an object");
    *out = &*it;
    return true;
  }
  bool Any(const char* key, nlohmann::json* out) {
    seen_.insert(key);
    auto it = object_.find(key);
    if (it != object_.end()) *out = *it;
    return true;
  }
  // No member C++ does not read.
  bool Done() {
    for (const auto& [key, value] : object_.items()) {
      if (seen_.count(key) == 0) {
        *err_ = where_ + "." + key + " is not a fact nemoc reads (schemas/contracts/expansion.schema.json)";
        return false;
      }
    }
    return true;
  }

 private:
  bool Fail(const char* key, const char* what) {
    *err_ = where_ + "." + key + " must be " + what;
    return false;
  }
  const nlohmann::json& object_;
  std::string where_;
  std::string* err_;
  std::set<std::string> seen_;
};

bool PlatformRows(const nlohmann::json& rows, const std::string& where,
                  std::vector<LibraryFacts::PlatformRow>* out, std::string* err) {
  if (!rows.is_array()) {
    *err = where + " must be an array";
    return false;
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!rows[i].is_object()) {
      *err = at + " must be an object";
      return false;
    }
    Reader r(rows[i], at, err);
    LibraryFacts::PlatformRow row;
    if (!r.String("what", &row.what) || !r.Strings("provides", &row.provides) ||
        !r.Sentences("checks", &row.checks) || !r.Done()) {
      return false;
    }
    out->push_back(std::move(row));
  }
  return true;
}

}  // namespace

bool ParseLibraryFacts(const nlohmann::json& summary, LibraryFacts* facts, std::string* err) {
  *facts = LibraryFacts();
  if (!summary.is_object()) {
    *err = "summary must be an object";
    return false;
  }
  Reader top(summary, "summary", err);
  const nlohmann::json* train = nullptr;
  const nlohmann::json* gitops = nullptr;
  const nlohmann::json* platform = nullptr;
  if (!top.String("profile", &facts->profile) ||
      !top.Object("train", &train) || !top.Sentences("storage", &facts->storage) ||
      !top.Object("gitops", &gitops) || !top.Sentences("stages", &facts->stages) ||
      !top.Sentences("stateDirs", &facts->state_dirs) || !top.Sentences("stageDirs", &facts->stage_dirs) ||
      !top.Object("platform", &platform) || !top.Done()) {
    return false;
  }
  if (train != nullptr) {
    auto& t = facts->train;
    t.present = true;
    Reader r(*train, "summary.train", err);
    if (!r.String("runtime", &t.runtime) || !r.String("fabric", &t.fabric) ||
        !r.String("resources", &t.resources) || !r.String("queue", &t.queue) ||
        !r.Strings("privileges", &t.privileges) || !r.Done()) {
      return false;
    }
  }
  if (gitops != nullptr) {
    auto& g = facts->gitops;
    g.present = true;
    Reader r(*gitops, "summary.gitops", err);
    if (!r.Strings("engines", &g.engines) || !r.String("source", &g.source) ||
        !r.Strings("platform", &g.platform) || !r.Any("cluster", &g.cluster) ||
        !r.Strings("bootstrap", &g.bootstrap) || !r.Strings("remove", &g.remove) ||
        !r.Strings("editWhileRunning", &g.edit_while_running) || !r.Sentences("namespaces", &g.namespaces) ||
        !r.Done()) {
      return false;
    }
    if (!g.cluster.is_null() && !g.cluster.is_object()) {
      *err = "summary.gitops.cluster must be an object or null";
      return false;
    }
  }
  if (platform != nullptr) {
    auto& p = facts->platform;
    p.present = true;
    Reader r(*platform, "summary.platform", err);
    nlohmann::json installs = nlohmann::json::array(), cluster_has = nlohmann::json::array();
    if (!r.Any("installs", &installs) || !r.Any("clusterHas", &cluster_has) || !r.Done() ||
        !PlatformRows(installs, "summary.platform.installs", &p.installs, err) ||
        !PlatformRows(cluster_has, "summary.platform.clusterHas", &p.cluster_has, err)) {
      return false;
    }
  }
  return true;
}

}  // namespace nemoc
