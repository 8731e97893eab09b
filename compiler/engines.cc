#include "engines.h"

#include <filesystem>

#include "data_dir.h"
#include "file_reader.h"

namespace nemoc {

const std::map<std::string, nlohmann::json>& EngineDescriptions() {
  static const std::map<std::string, nlohmann::json> table = [] {
    std::map<std::string, nlohmann::json> out;
    DataDir data;
    std::string err;
    if (!FindDataDir(&data, &err)) return out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(data.libsonnet() + "/engines", ec)) {
      if (entry.path().extension() != ".json") continue;
      std::string text;
      if (!RealFiles().Read(entry.path().string(), 1 << 20, &text, &err)) continue;
      nlohmann::json about = nlohmann::json::parse(text, nullptr, false);
      if (about.is_object()) out.emplace(entry.path().stem().string(), std::move(about));
    }
    return out;
  }();
  return table;
}

nlohmann::json EngineDescription(const std::string& engine) {
  const auto& table = EngineDescriptions();
  auto it = table.find(engine);
  return it == table.end() ? nlohmann::json::object() : it->second;
}

}  // namespace nemoc
