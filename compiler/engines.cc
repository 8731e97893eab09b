#include "engines.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "data_dir.h"
#include "file_reader.h"
#include "jsonnet_expander.h"
#include "schema_validator.h"

namespace nemoc {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxDescriptionBytes = 1 << 20;

// The <name><ext> files of `dir` whose names a spec may use: name -> path.
std::map<std::string, std::string> NamedFiles(const fs::path& dir, const std::string& ext) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() == ext && entry.is_regular_file(file_ec) && SafeLibraryName(name)) {
      out.emplace(name, entry.path().string());
    }
  }
  return out;
}

}  // namespace

bool EngineTable::Load(const std::string& builtin_root, const std::vector<std::string>& jpaths,
                       const InputSchema* contract, Diagnostics* diags) {
  engines_.clear();
  bool ok = true;
  std::map<std::string, Engine> by_name;
  for (const auto& [name, file] : NamedFiles(fs::path(builtin_root) / "engines", ".json")) {
    // nemoc's own: parsed, not located (tests/schema/catalogue.py holds them
    // to the contract).
    std::string text, err;
    Engine engine;
    engine.name = name;
    engine.file = file;
    engine.about = RealFiles().Read(file, kMaxDescriptionBytes, &text, &err) ? nlohmann::json::parse(text, nullptr, false)
                                                                             : nlohmann::json();
    if (!engine.about.is_object()) {
      diags->Error("internal.engine", "built-in engine " + name + ": " + (err.empty() ? "not a JSON object" : err),
                   {file, 0, 0});
      ok = false;
      continue;
    }
    by_name[name] = std::move(engine);
  }
  // The --jpath directories in reverse, so that the first one wins (the
  // order imports search them in).
  for (auto jpath = jpaths.rbegin(); jpath != jpaths.rend(); ++jpath) {
    const fs::path dir = fs::path(*jpath) / "engines";
    const auto libraries = NamedFiles(dir, ".libsonnet");
    const auto descriptions = NamedFiles(dir, ".json");
    for (const auto& [name, library] : libraries) {
      if (descriptions.count(name) != 0) continue;
      diags->Error("engine.description",
                   "engine " + name + ": " + library + " has no description beside it (" + name + ".json)",
                   {library, 0, 0},
                   "a GitOps engine is its library and its description, engines/" + name +
                       ".json (schemas/contracts/engine.schema.json): its title, notes and the schema of "
                       "spec.gitops." + name + " (docs/extending.md)");
      ok = false;
    }
    for (const auto& [name, file] : descriptions) {
      Document doc;
      if (!LoadDescription(file, contract, &doc, diags)) {
        ok = false;
        continue;
      }
      if (libraries.count(name) == 0) {
        diags->Error("engine.library", "engine " + name + ": its library " + name + ".libsonnet is not beside " + file,
                     {file, 1, 1},
                     "an engine's library is a file of the same engines/ directory, "
                     "(import 'nemoc/engine.libsonnet') + { ... } (docs/extending.md)");
        ok = false;
        continue;
      }
      auto builtin = by_name.find(name);
      if (builtin != by_name.end() && builtin->second.builtin) {
        diags->Warning("jpath.shadows-builtin",
                       "--jpath " + *jpath + ": engines/" + name + ".json replaces nemoc's built-in engine " + name +
                           " (" + builtin->second.file + ")",
                       {file, 0, 0},
                       "to add an engine of your own, give it a name of its own; keep this one only to replace the "
                       "built-in on purpose");
      }
      Engine engine;
      engine.name = name;
      engine.file = file;
      engine.builtin = false;
      engine.about = std::move(doc.root);
      by_name[name] = std::move(engine);
    }
  }
  for (auto& [name, engine] : by_name) engines_.push_back(std::move(engine));
  return ok;
}

const Engine* EngineTable::Find(const std::string& name) const {
  auto it = std::find_if(engines_.begin(), engines_.end(), [&](const Engine& e) { return e.name == name; });
  return it == engines_.end() ? nullptr : &*it;
}

nlohmann::json EngineTable::Description(const std::string& name) const {
  const Engine* engine = Find(name);
  return engine == nullptr ? nlohmann::json::object() : engine->about;
}

const EngineTable& EngineTable::Builtin() {
  static const EngineTable table = [] {
    EngineTable out;
    DataDir data;
    std::string err;
    Diagnostics ignored;  // an unreadable data directory: no descriptions (callers show names)
    if (FindDataDir(&data, &err)) out.Load(data.libsonnet(), {}, nullptr, &ignored);
    return out;
  }();
  return table;
}

}  // namespace nemoc
