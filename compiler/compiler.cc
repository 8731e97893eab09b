#include "compiler.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <tuple>

#include "build_stamp.h"
#include "check_registry.h"
#include "checks.h"
#include "contracts.h"
#include "cost.h"
#include "cluster_bundle.h"
#include "disk_interface.h"
#include "edit_distance.h"
#include "eval_watchdog.h"
#include "facts.h"
#include "file_reader.h"
#include "framework_check.h"
#include "gpu_node.h"
#include "node_fabric.h"
#include "jsonnet_expander.h"
#include "normalizer.h"
#include "object_patches.h"
#include "schema_repair.h"
#include "output_verifier.h"
#include "plan.h"
#include "profiles.h"
#include "secret_scanner.h"
#include "set_override.h"
#include "spec_loader.h"
#include "summary.h"
#include "target_overrides.h"
#include "yaml_emitter.h"

namespace nemoc {

// Where a profile file declares `member` (`member::` or `member:`, not a
// mention in a comment or a longer name), for messages about its value; the
// file itself when it inherits the member.
static Location MemberDeclaration(const std::string& text, const std::string& member, const std::string& file) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t at = text.find(member); at != std::string::npos; at = text.find(member, at + member.size())) {
    const size_t next = text.find_first_not_of(" \t", at + member.size());
    if ((at > 0 && ident(text[at - 1])) || next == std::string::npos || text[next] != ':') continue;
    const size_t line_start = text.rfind('\n', at);
    return {file, static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1,
            static_cast<int>(at - (line_start == std::string::npos ? 0 : line_start + 1)) + 1};
  }
  return {file, 0, 0};
}

Compiler::Compiler(DataDir data, CompileOptions options, FileReader* reader)
    : data_(std::move(data)), options_(std::move(options)), reader_(reader != nullptr ? reader : &RealFiles()) {}

Compiler::~Compiler() = default;

bool Compiler::Init(Diagnostics* diags) {
  std::string err;
  // The input schema is read here and compiled on first use (InputSchemaFor):
  // a build whose targets are all up to date never needs it.
  if (!reader_->Read(data_.schema(), kMaxTableBytes, &schema_text_, &err)) {
    diags->Error("internal.schema", "cannot read the input schema: " + err);
    return false;
  }
  if (!ModelCatalog::Load(data_.models(), &catalog_, &err, reader_)) {
    diags->Error("internal.catalog", err);
    return false;
  }
  if (!AcceleratorTable::Load(data_.accelerators(), &accelerators_, &err, reader_)) {
    diags->Error("internal.accelerators", err);
    return false;
  }
  if (!NemoReleases::Load(data_.libsonnet() + "/nemo/versions.json", &releases_, &err, reader_)) {
    diags->Error("internal.table", err);
    return false;
  }
  if (!options_.kube_schemas_dir.empty()) {
    kube_schemas_ = KubeSchemas::Open(options_.kube_schemas_dir, &err);
    if (!kube_schemas_) {
      diags->Error("usage.kube-schemas", err);
      return false;
    }
  }
  for (const auto& jpath : options_.jpaths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(jpath, ec)) {
      diags->Error("usage.jpath", "--jpath " + jpath + " is not a directory");
      return false;
    }
    // The schemas of the kinds a --jpath directory's runtimes, profiles or
    // components emit (a Volcano Job, a CRD of your own): its kube-schemas/,
    // the layout of the shipped bundle. Validated like Kubernetes' own kinds.
    const std::string bundle = (std::filesystem::path(jpath) / "kube-schemas").string();
    if (kube_schemas_ && std::filesystem::exists(bundle + "/index.json", ec) &&
        !kube_schemas_->AddBundle(bundle, &err)) {
      diags->Error("usage.jpath", "--jpath " + jpath + ": " + err);
      return false;
    }
  }
  contracts_ = Contracts::FromEnvironment(data_.contracts(), &err);
  if (contracts_ == nullptr && !err.empty()) {
    diags->Error("internal.contract", "NEMOC_CHECK_CONTRACTS: " + err);
    return false;
  }
  WarnShadowedLibraries(diags);
  IndexLibraries();
  // The stages (stages.h) and the GitOps engines (engines.h): a --jpath
  // directory's descriptions are checked against their contract here, once
  // per run (without --jpath there are none to check).
  auto contract = [&](const char* file, std::unique_ptr<InputSchema>* out) {
    if (options_.jpaths.empty()) return true;
    *out = InputSchema::Load(data_.contracts() + "/" + file, &err, reader_);
    if (*out == nullptr) diags->Error("internal.contract", err);
    return *out != nullptr;
  };
  std::unique_ptr<InputSchema> stage_contract, engine_contract;
  if (!contract("stage.schema.json", &stage_contract) ||
      !stage_table_.Load(data_.libsonnet(), options_.jpaths, stage_contract.get(), diags) ||
      !contract("engine.schema.json", &engine_contract) ||
      !engine_table_.Load(data_.libsonnet(), options_.jpaths, engine_contract.get(), diags)) {
    return false;
  }
  stage_table_source_ = StageTableSource(stage_table_.stages());
  stamps_ = std::make_unique<StampCalculator>(data_, options_.jpaths, kube_schemas_.get());
  return true;
}

void Compiler::IndexLibraries() {
  profile_files_ = ProfileFiles(data_, options_.jpaths);
  if (options_.jpaths.empty()) return;  // the schema holds the built-in profiles' options
  for (const auto& [name, file] : ProfileFiles(data_, {})) builtin_profiles_.insert(name);
  user_runtime_files_ = UserRuntimeFiles(options_.jpaths);
  user_component_files_ = UserLibraryFiles(options_.jpaths, "components");
}

void Compiler::Resolve(const LoadedSpec& loaded) const {
  // A --jpath profile (one whose name nemoc's profiles/ lacks) brings options
  // the schema does not hold: what it says about itself is evaluated here,
  // once per run and only when a spec names it (an unrelated profile of the
  // directory, broken or costly, is never evaluated). Names after --set, as
  // Prepare will see them; a spec that fails here is reported by Prepare.
  if (options_.jpaths.empty() || !loaded.attempted || !loaded.ok) return;
  Document with_sets;
  const Document* doc = &loaded.doc;
  if (!options_.sets.empty()) {
    with_sets = loaded.doc;
    Diagnostics ignored;
    ApplySets(&with_sets, &ignored);
    doc = &with_sets;
  }
  const nlohmann::json::json_pointer targets_ptr("/spec/targets");
  if (!doc->root.contains(targets_ptr) || !doc->root.at(targets_ptr).is_array()) return;
  for (const auto& target : doc->root.at(targets_ptr)) {
    if (!target.is_object() || !target.contains("profile") || !target["profile"].is_string()) continue;
    const std::string name = target["profile"].get<std::string>();
    if (builtin_profiles_.count(name) != 0 || profile_files_.count(name) == 0) continue;
    std::lock_guard<std::mutex> lock(profiles_mu_);
    if (profile_descriptions_.count(name) != 0) continue;
    ProfileDescription description;
    {
      EvalWatch watch("profile " + name);
      description.ok =
          MakeExpander()->DescribeProfile(name, &description.json, &description.diags, &description.is_profile);
    }
    // Where its gpuNode and nodeFabric are declared, for the message when a
    // rule is wrong (a profile extending another may inherit it: then the file).
    const std::string& file = profile_files_.at(name);
    description.gpu_node_at = {file, 0, 0};
    description.node_fabric_at = {file, 0, 0};
    std::string text, read_err;
    if (reader_->Read(file, kMaxTableBytes, &text, &read_err)) {
      description.gpu_node_at = MemberDeclaration(text, "gpuNode", file);
      description.node_fabric_at = MemberDeclaration(text, "nodeFabric", file);
    }
    profile_descriptions_.emplace(name, std::move(description));
  }
}

bool Compiler::ComposedInputSchema(nlohmann::json* out, Diagnostics* diags) const {
  // A spec naming every profile, runtime and component of the --jpath
  // directories, so that InputSchemaForSpec composes each as a build would.
  LoadedSpec all;
  all.attempted = all.ok = true;
  nlohmann::json targets = nlohmann::json::array();
  for (const auto& [name, file] : profile_files_) {
    if (builtin_profiles_.count(name) == 0 && !options_.jpaths.empty()) targets.push_back({{"profile", name}});
  }
  for (const auto& [name, file] : user_runtime_files_) targets.push_back({{"runtime", name}});
  nlohmann::json has = nlohmann::json::object();
  for (const auto& [name, file] : user_component_files_) has[name] = true;
  if (!has.empty()) targets.push_back({{"clusterHas", has}});
  all.doc.root = {{"spec", {{"targets", targets}}}};
  Resolve(all);
  // A helper library of a --jpath directory is not a profile (Resolve found
  // out): a build says so only when a spec names it.
  nlohmann::json& listed = all.doc.root["spec"]["targets"];
  {
    std::lock_guard<std::mutex> lock(profiles_mu_);
    nlohmann::json kept = nlohmann::json::array();
    for (auto& target : listed) {
      const auto described = target.contains("profile") ? profile_descriptions_.find(target["profile"].get<std::string>())
                                                        : profile_descriptions_.end();
      if (described == profile_descriptions_.end() || described->second.is_profile) kept.push_back(std::move(target));
    }
    listed = std::move(kept);
  }
  const InputSchema* schema = InputSchemaForSpec(all.doc, diags);
  if (schema == nullptr) return false;
  *out = schema->json();
  return true;
}

void Compiler::WarnShadowedLibraries(Diagnostics* diags) const {
  // Which file replaces which is the expander's precedence
  // (JsonnetExpander::BuiltinReplacedBy, docs/extending.md). Either may be
  // meant (a patched profile) or not: the build says so, naming both.
  namespace fs = std::filesystem;
  if (options_.jpaths.empty()) return;
  const std::unique_ptr<JsonnetExpander> expander = MakeExpander();
  constexpr size_t kMaxEntries = 10000;  // a --jpath pointed at a huge tree is not walked forever
  for (const auto& jpath : options_.jpaths) {
    std::vector<std::pair<std::string, std::string>> shadows;  // --jpath file, built-in file
    std::error_code ec;
    size_t entries = 0;
    for (fs::recursive_directory_iterator it(jpath, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end && entries < kMaxEntries; it.increment(ec), ++entries) {
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      const std::string builtin = expander->BuiltinReplacedBy(it->path().lexically_relative(jpath).string());
      if (!builtin.empty()) shadows.emplace_back(it->path().string(), builtin);
    }
    std::sort(shadows.begin(), shadows.end());  // directory order is the file system's
    for (const auto& [mine, builtin] : shadows) {
      diags->Warning("jpath.shadows-builtin",
                     "--jpath " + jpath + ": " + fs::path(mine).lexically_relative(jpath).string() +
                         " replaces nemoc's built-in " + builtin + " for every import (the --jpath "
                         "directories are searched first)",
                     {mine, 0, 0},
                     "to add a library or profile of your own, give it a name of its own; keep this "
                     "name only to replace the built-in on purpose");
    }
  }
}

const InputSchema* Compiler::InputSchemaFor(Diagnostics* diags) const {
  std::call_once(input_schema_once_, [this] {
    nlohmann::json schema = nlohmann::json::parse(schema_text_, nullptr, false);
    if (schema.is_discarded() || !schema.is_object()) {
      input_schema_error_ = "input schema " + data_.schema() + " is not valid JSON";
      return;
    }
    input_schema_ = InputSchema::FromJson(std::move(schema), data_.schema(), &input_schema_error_);
  });
  if (input_schema_ == nullptr) diags->Error("internal.schema", input_schema_error_);
  return input_schema_.get();
}

const InputSchema* Compiler::InputSchemaForSpec(const Document& doc, Diagnostics* diags) const {
  const InputSchema* base = InputSchemaFor(diags);
  if (base == nullptr) return nullptr;
  // Profiles the targets name whose file exists (the unknown ones are
  // reported after validation) and whose options the schema lacks; runtimes
  // they name that a --jpath directory has (runtimes/<name>.libsonnet) and
  // the schema's enum lacks.
  std::map<std::string, std::string> extra;     // profile -> its file (the first root that has it)
  std::map<std::string, std::string> runtimes;  // runtime -> its file
  const nlohmann::json::json_pointer targets_ptr("/spec/targets");
  const nlohmann::json::json_pointer runtime_ptr("/definitions/target/properties/runtime");
  const nlohmann::json::json_pointer cluster_has_ptr("/definitions/target/properties/clusterHas/propertyNames/enum");
  std::map<std::string, std::string> components;  // component of your own -> its file
  static const nlohmann::json kNoRuntimeSchema = nlohmann::json::object();
  const nlohmann::json& runtime_schema =
      base->json().contains(runtime_ptr) ? base->json().at(runtime_ptr) : kNoRuntimeSchema;
  // `name` when the schema's enum `known` lacks it and a --jpath directory has its file.
  auto own = [](const nlohmann::json& known, const std::map<std::string, std::string>& files, const std::string& name,
                std::map<std::string, std::string>* out) {
    auto file = files.find(name);
    if (file != files.end() && std::find(known.begin(), known.end(), name) == known.end()) (*out)[name] = file->second;
  };
  if (doc.root.contains(targets_ptr) && doc.root.at(targets_ptr).is_array()) {
    for (const auto& target : doc.root.at(targets_ptr)) {
      if (!target.is_object()) continue;
      if (target.contains("runtime") && target["runtime"].is_string()) {
        own(runtime_schema.value("enum", nlohmann::json::array()), user_runtime_files_,
            target["runtime"].get<std::string>(), &runtimes);
      }
      // A component of your own the cluster already runs (clusterHas).
      if (target.contains("clusterHas") && target["clusterHas"].is_object() &&
          base->json().contains(cluster_has_ptr)) {
        for (const auto& [name, value] : target["clusterHas"].items()) {
          own(base->json().at(cluster_has_ptr), user_component_files_, name, &components);
        }
      }
      if (!target.contains("profile") || !target["profile"].is_string()) continue;
      const std::string name = target["profile"].get<std::string>();
      if (base->profiles().count(name) != 0) continue;
      auto file = profile_files_.find(name);
      if (file != profile_files_.end()) extra[name] = file->second;
    }
  }
  // The stages of --jpath directories (stages.h): each described one a spec
  // may name joins spec.stages (replacing a built-in one of its key).
  std::vector<const Stage*> own_stages;
  for (const auto& stage : stage_table_.stages()) {
    if (!stage.builtin && stage.schema.is_object()) own_stages.push_back(&stage);
  }
  // The GitOps engines of --jpath directories (engines.h): each joins
  // spec.gitops.engines with its settings, spec.gitops.<name>.
  std::vector<const Engine*> own_engines;
  for (const auto& engine : engine_table_.engines()) {
    if (!engine.builtin) own_engines.push_back(&engine);
  }
  if (extra.empty() && runtimes.empty() && components.empty() && own_stages.empty() && own_engines.empty()) {
    return base;
  }
  std::string key;
  for (const auto& [name, file] : extra) key += (key.empty() ? "" : ",") + name;
  key += ";";
  for (const auto& [name, file] : runtimes) key += name + ",";
  key += ";";
  for (const auto& [name, file] : components) key += name + ",";
  key += ";";
  for (const Stage* stage : own_stages) key += stage->key + ",";
  key += ";";
  for (const Engine* engine : own_engines) key += engine->name + ",";
  nlohmann::json schema = base->json();
  const nlohmann::json::json_pointer gitops_ptr("/definitions/gitops/properties");
  for (const Engine* engine : own_engines) {
    if (!schema.contains(gitops_ptr) || !schema.at(gitops_ptr).contains("engines")) break;
    nlohmann::json& engines = schema.at(gitops_ptr)["engines"];
    nlohmann::json& names = engines["items"]["enum"];
    if (std::find(names.begin(), names.end(), engine->name) == names.end()) {
      names.push_back(engine->name);
      engines["maxItems"] = names.size();
      std::string described = engines["items"].value("description", "");
      if (!described.empty() && described.back() == '.') described.pop_back();
      engines["items"]["description"] = described + " or " + engine->name + " (" +
                                        engine->about.value("summary", "") + "; an engine of your own, " +
                                        engine->file + ").";
    }
    schema.at(gitops_ptr)[engine->name] = engine->about["schema"];
  }
  const nlohmann::json::json_pointer stages_ptr("/definitions/stages/properties");
  for (const Stage* stage : own_stages) {
    if (!schema.contains(stages_ptr)) break;
    schema.at(stages_ptr)[stage->key] = stage->schema;
  }
  // A component of your own may be one the cluster already runs.
  for (const auto& [name, file] : components) schema.at(cluster_has_ptr).push_back(name);
  // A runtime of your own joins the enum, described by where it lives.
  for (const auto& [name, file] : runtimes) {
    if (!schema.contains(runtime_ptr) || !schema.at(runtime_ptr).contains("enum")) break;  // an open runtime field
    schema.at(runtime_ptr)["enum"].push_back(name);
    if (schema.at(runtime_ptr).contains("enumDescriptions")) {
      schema.at(runtime_ptr)["enumDescriptions"].push_back("a runtime of your own (" + file + ")");
    }
  }
  bool ok = true;
  for (const auto& [name, file] : extra) {
    ProfileDescription described;
    {
      std::lock_guard<std::mutex> lock(profiles_mu_);
      auto it = profile_descriptions_.find(name);
      if (it == profile_descriptions_.end()) {
        diags->Error("internal.profile", "profile " + name + " was not described before Prepare (Compiler::Resolve)");
        ok = false;
        continue;
      }
      described = it->second;
    }
    if (!described.is_profile) {
      // A helper library of a --jpath directory.
      diags->Error("spec.unknown-profile", "profile " + name + ": " + file +
                                               " does not extend nemoc/profile.libsonnet, so it is not a profile",
                   {file, 0, 0}, "docs/extending.md says what a profile file holds");
      ok = false;
      continue;
    }
    diags->Append(described.diags);
    if (!described.ok) {
      ok = false;
      continue;
    }
    // Its default runtime: a built-in one or one of a --jpath directory.
    const nlohmann::json& default_runtime = described.json["defaultRuntime"];
    const auto& builtin_runtimes = runtime_schema.value("enum", nlohmann::json::array());
    if (!default_runtime.is_string() ||
        (runtime_schema.contains("enum") &&
         std::find(builtin_runtimes.begin(), builtin_runtimes.end(), default_runtime) == builtin_runtimes.end() &&
         user_runtime_files_.count(default_runtime.get<std::string>()) == 0)) {
      std::string known;
      for (const auto& r : builtin_runtimes) known += (known.empty() ? "" : ", ") + (r.is_string() ? r.get<std::string>() : r.dump());
      diags->Error("profile.runtime",
                   "profile " + name + ": defaults.runtime " + default_runtime.dump() +
                       " is neither a built-in runtime nor runtimes/<name>.libsonnet of a --jpath directory",
                   {file, 0, 0},
                   "built-in runtimes: " + known);
      ok = false;
      continue;
    }
    std::string err;
    if (!ComposeProfileOptions(name, described.json["options"], &schema, &err)) {
      diags->Error("profile.options", "profile " + name + ": " + err, {file, 0, 0},
                   "libsonnet/profile.libsonnet documents options: target field -> its JSON Schema");
      ok = false;
    }
    // Its GPU node joins the built-ins' (gpu_node.h): what Prepare's checks read.
    const nlohmann::json& rule = described.json["gpuNode"];
    if (!ValidGpuNodeRule(rule, &err) || !KnownAccelerators(rule, accelerators_, &err)) {
      diags->Error("profile.gpu-node", "profile " + name + ": " + err, described.gpu_node_at,
                   "libsonnet/profile.libsonnet documents gpuNode; accelerators are the keys of "
                   "libsonnet/accelerators.json");
      ok = false;
    } else {
      schema[nlohmann::json::json_pointer(std::string(kGpuNodesAt) + "/" + EscapePointerToken(name))] = rule;
    }
    // And its node fabric (node_fabric.h), when it declares one.
    const nlohmann::json& fabric = described.json["nodeFabric"];
    if (!fabric.is_null() && !ValidNodeFabricRule(fabric, &err)) {
      diags->Error("profile.node-fabric", "profile " + name + ": " + err, described.node_fabric_at,
                   "libsonnet/profile.libsonnet documents nodeFabric; the built-in profiles' fabrics are the "
                   "keys of libsonnet/fabrics.libsonnet");
      ok = false;
    } else if (!fabric.is_null()) {
      schema[nlohmann::json::json_pointer(std::string(kNodeFabricsAt) + "/" + EscapePointerToken(name))] = fabric;
    }
  }
  if (!ok) return nullptr;
  std::lock_guard<std::mutex> lock(profiles_mu_);
  auto& composed = composed_schemas_[key];
  if (composed == nullptr) {
    std::string err;
    composed = InputSchema::FromJson(std::move(schema), "the input schema with profiles " + key, &err);
    if (composed == nullptr) {
      diags->Error("profile.options", err);
      return nullptr;
    }
  }
  return composed.get();
}

void Compiler::WarnStaleSchemaCopy(const Document& doc, Diagnostics* diags) const {
  // The editors' schema the spec's modeline names, when it is a file beside
  // the spec (nemoc init writes .nemoc/project.schema.json): after an upgrade
  // it still describes the old nemoc, and editors would complete and flag
  // against it without a word. Only the first lines hold a modeline.
  static const std::string kModeline = "# yaml-language-server: $schema=";
  size_t line_start = 0;
  for (int line = 1; line <= 5 && line_start < doc.text.size(); ++line) {
    size_t end = doc.text.find('\n', line_start);
    if (end == std::string::npos) end = doc.text.size();
    const std::string text = doc.text.substr(line_start, end - line_start);
    if (text.rfind(kModeline, 0) == 0) {
      std::string ref = text.substr(kModeline.size());
      while (!ref.empty() && (ref.back() == ' ' || ref.back() == '\r')) ref.pop_back();
      if (ref.empty() || ref.find("://") != std::string::npos || ref[0] == '/') return;
      const std::string copy = (std::filesystem::path(doc.file).parent_path() / ref).string();
      std::string contents, err;
      if (schema_text_.empty() || !reader_->Read(copy, kMaxTableBytes, &contents, &err) ||
          contents == schema_text_) {
        return;
      }
      diags->Warning("spec.stale-schema", "the schema the modeline names (" + ref +
                                              ") is not this nemoc's: editors complete and check the spec "
                                              "against another version",
                     {doc.file, line, static_cast<int>(kModeline.size()) + 1},
                     "refresh it: nemoc schema > " + ref + " (and commit it with the spec)");
      return;
    }
    line_start = end + 1;
  }
}

const nlohmann::json& PreparedSpec::SpecFor(const std::string& name) const {
  auto specs = normalized.find("targetSpecs");
  if (specs != normalized.end()) {
    auto it = specs->find(name);
    if (it != specs->end()) return *it;
  }
  return normalized;
}

const Document& PreparedSpec::DocFor(const std::string& name) const {
  auto it = target_docs.find(name);
  return it != target_docs.end() ? it->second : doc;
}

const TypedSpec& PreparedSpec::TypedFor(const std::string& name) const {
  auto it = target_typed.find(name);
  return it != target_typed.end() ? it->second : typed;
}

namespace {

// A normalized spec nothing repaired that does not read through its types
// breaks the contract the normalizer promises (schemas/contracts): a nemoc
// bug, which would otherwise only silence the checks that need the part.
void ReportBrokenContract(const Document& doc, const TypedSpec& typed, Diagnostics* diags) {
  if (typed.error.empty()) return;
  diags->Error("internal.contract",
               "the normalized spec breaks its contract (schemas/contracts/normalized-spec.schema.json): " +
                   typed.error,
               doc.map.Locate("/spec", /*prefer_key=*/true),
               "a nemoc bug: please report it with this spec");
}

}  // namespace

bool Compiler::ApplySets(Document* doc, Diagnostics* diags, bool* conflicted) const {
  bool ok = true;
  // D9 (mistake 12): two --set of one path, or of a path and a path inside
  // it, would have the last one win silently.
  std::vector<std::string> paths;
  std::set<std::string> given;
  for (const auto& assignment : options_.sets) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos) continue;
    if (!given.insert(assignment).second) continue;  // the same assignment again changes nothing
    const std::string path = assignment.substr(0, eq);
    for (const auto& earlier : paths) {
      const bool same = earlier == path;
      const bool nested = path.rfind(earlier + ".", 0) == 0 || earlier.rfind(path + ".", 0) == 0 ||
                          path.rfind(earlier + "[", 0) == 0 || earlier.rfind(path + "[", 0) == 0;
      if (same || nested) {
        diags->Error("set.conflict",
                     "--set " + path + (same ? " is given twice" : " and --set " + earlier + " set one value") +
                         ": the last would win silently",
                     Location{"--set " + path, 0, 0}, "give each path once");
        ok = false;
        break;
      }
    }
    paths.push_back(path);
  }
  // A caller that checks on (D9: every problem in one run) gets the sets
  // applied in order, the last winning, and builds nothing.
  if (!ok && conflicted == nullptr) return false;
  if (!ok) *conflicted = true;
  ok = true;
  for (const auto& assignment : options_.sets) ok = ApplySetOverride(assignment, doc, diags) && ok;
  return ok;
}

bool Compiler::Selected(const std::string& name) const {
  return options_.only_targets.empty() ||
         std::find(options_.only_targets.begin(), options_.only_targets.end(), name) !=
             options_.only_targets.end();
}

std::unique_ptr<JsonnetExpander> Compiler::MakeExpander() const {
  std::vector<std::string> roots = options_.jpaths;
  roots.push_back(data_.libsonnet());
  roots.push_back(data_.profiles());
  auto expander = std::make_unique<JsonnetExpander>(roots, options_.jpaths.size(), reader_);
  expander->DumpEntriesTo(options_.dump_entry_dir);
  expander->CheckContracts(contracts_.get());
  expander->SelectTargets(options_.only_targets);
  expander->UseStageTable(stage_table_source_);
  // A --jpath profile's default runtime, as Resolve described it: the
  // expander brings a --jpath runtime into an evaluation only when needed.
  expander->ProfileDefaultRuntime([this](const std::string& profile) {
    std::lock_guard<std::mutex> lock(profiles_mu_);
    auto it = profile_descriptions_.find(profile);
    if (it == profile_descriptions_.end() || !it->second.json.is_object()) return std::string();
    const auto runtime = it->second.json.find("defaultRuntime");
    return runtime != it->second.json.end() && runtime->is_string() ? runtime->get<std::string>() : std::string();
  });
  return expander;
}

bool Compiler::UpToDate(const std::string& path, CompiledSpec* out, JsonnetExpander* expander,
                        LoadedSpec* loaded) const {
  if (stamps_ == nullptr) return false;
  // Just enough of the pipeline to name the targets: load and --set. A spec
  // that fails here is compiled, which reports why.
  if (!Load(path, loaded) || !loaded->diags.empty()) return false;
  Diagnostics ignored;
  Document with_sets;
  if (!options_.sets.empty()) {
    with_sets = loaded->doc;  // CompileFile applies --set itself, after its checks
    if (!ApplySets(&with_sets, &ignored)) return false;
  }
  const Document& doc = options_.sets.empty() ? loaded->doc : with_sets;
  const nlohmann::json& root = doc.root;
  if (!root.is_object()) return false;
  auto metadata = root.find("metadata");
  auto spec = root.find("spec");
  if (metadata == root.end() || !metadata->is_object() || spec == root.end() ||
      !spec->is_object()) {
    return false;
  }
  auto name = metadata->find("name");
  auto targets = spec->find("targets");
  if (name == metadata->end() || !name->is_string() || targets == spec->end() ||
      !targets->is_array()) {
    return false;
  }
  std::vector<std::string> names;
  for (const auto& t : *targets) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) return false;
    names.push_back(t["name"].get<std::string>());
  }
  for (const auto& wanted : options_.only_targets) {
    if (std::find(names.begin(), names.end(), wanted) == names.end()) return false;
  }
  SpecInputs inputs{std::filesystem::path(path).filename().string(), doc.text, options_.sets,
                    options_.jpaths, ""};
  std::string pins_err;
  inputs.pins_text = ReadPins(reader_, path, &pins_err);
  if (!pins_err.empty()) return false;
  out->path = path;
  out->project = name->get<std::string>();
  out->project_dir = options_.out_dir + "/" + out->project;
  out->all_targets = options_.only_targets.empty() || options_.only_targets.size() >= names.size();
  out->targets.clear();
  RealDisk disk;
  for (const auto& target : names) {
    if (!Selected(target)) {
      continue;
    }
    CompiledTarget skipped;
    skipped.name = target;
    skipped.dir = out->project_dir + "/" + target;
    skipped.up_to_date = true;
    if (!TargetUpToDate(disk, *stamps_, inputs, target, skipped.dir, expander)) return false;
    out->targets.push_back(std::move(skipped));
  }
  return !out->targets.empty();
}

std::string KustomizationYaml(const std::vector<std::string>& resources) {
  nlohmann::json k = {{"apiVersion", "kustomize.config.k8s.io/v1beta1"},
                      {"kind", "Kustomization"},
                      {"resources", resources}};
  return EmitYaml(k);
}

namespace {

// D9: every string value of `node` that holds one of `credentials` (or any
// credential shape) becomes asterisks of its length; `masked` gets its
// pointer. Later checks then read no credential, and quote none.
void MaskCredentials(nlohmann::json* node, const std::vector<std::string>& credentials, const std::string& pointer,
                     std::vector<std::string>* masked) {
  if (node->is_object()) {
    for (auto& [key, child] : node->items()) MaskCredentials(&child, credentials, pointer + "/" + EscapePointerToken(key), masked);
  } else if (node->is_array()) {
    for (size_t i = 0; i < node->size(); ++i) MaskCredentials(&(*node)[i], credentials, pointer + "/" + std::to_string(i), masked);
  } else if (node->is_string()) {
    const std::string& value = node->get_ref<const std::string&>();
    bool holds = !FindSecrets(value).empty();
    for (const auto& c : credentials) {
      holds = holds || (c.size() >= 4 && value.find(c) != std::string::npos) || (!c.empty() && c == value);
    }
    if (holds) {
      *node = std::string(value.size(), '*');
      masked->push_back(pointer);
    }
  }
}

// D9: whether `d` is located inside a value Prepare masked or removed to go
// on: it would be about a value the user did not write.
bool InsideRepaired(const PreparedSpec& prepared, const Diagnostic& d) {
  if (d.location.pointer.empty()) return false;
  for (const auto& root : prepared.repaired) {
    if (PointerAtOrBelow(d.location.pointer, root)) return true;
  }
  return false;
}

// Drops the diagnostics from index `from` that InsideRepaired selects.
void DropInsideRepaired(const PreparedSpec& prepared, size_t from, Diagnostics* diags) {
  if (prepared.repaired.empty()) return;
  diags->EraseFrom(from, [&](const Diagnostic& d) { return InsideRepaired(prepared, d); });
}

// Whether `text` is plausibly a spec (or an attempt at one): it has content
// beyond comments and null-document markers, and names a top-level field of
// one. An empty or null document is the loader's to report.
bool LooksLikeASpec(const std::string& text) {
  bool content = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || line == "---" || line == "..." || line == "~" || line == "null") continue;
    content = true;
    break;
  }
  if (!content) return true;
  for (const char* field : {"apiVersion", "kind", "metadata", "spec"}) {
    if (text.find(field) != std::string::npos) return true;
  }
  return false;
}


// One object per file, a kustomization.yaml in every directory, SUMMARY.md.
// The root lists the top-level directories except gitops/: the engines'
// own objects (and the platform bundle) are applied to the engine, not
// synced as part of the target they deliver. `kustomizations` adds
// resources (other directories of the tree) to a directory's
// kustomization.yaml, which exists even without objects of its own: how
// Argo CD's pipeline and serving Applications each sync a part of the stages.
FileTree BuildTree(const std::map<std::string, nlohmann::json>& files,
                   const std::map<std::string, std::vector<std::string>>& kustomizations,
                   const std::string& summary) {
  FileTree tree;
  std::map<std::string, std::vector<std::string>> by_dir;
  for (const auto& [path, object] : files) {
    tree[path] = EmitYaml(object);
    size_t slash = path.rfind('/');
    by_dir[path.substr(0, slash)].push_back(path.substr(slash + 1));
  }
  for (const auto& [dir, resources] : kustomizations) {
    auto& listed = by_dir[dir];
    listed.insert(listed.end(), resources.begin(), resources.end());
  }
  std::vector<std::string> dirs;
  for (const auto& [dir, names] : by_dir) {
    tree[dir + "/kustomization.yaml"] = KustomizationYaml(names);
    if (dir.find('/') == std::string::npos && dir != kGitopsDir) dirs.push_back(dir);
  }
  tree["kustomization.yaml"] = KustomizationYaml(dirs);
  tree["SUMMARY.md"] = summary;
  return tree;
}

// How many targets a loaded (maybe invalid) spec lists.
size_t TargetCount(const Document& doc) {
  const nlohmann::json& root = doc.root;
  if (!root.is_object() || !root.contains("spec") || !root["spec"].is_object()) return 0;
  const nlohmann::json& spec = root["spec"];
  return spec.contains("targets") && spec["targets"].is_array() ? spec["targets"].size() : 0;
}

// Where a target's tree departs from the spec file alone: its overrides
// (each with the value the spec gives, if it gives one) and this build's --set.
SummaryProvenance Provenance(const Document& spec_doc, const std::string& target_pointer,
                             const std::vector<std::string>& sets) {
  SummaryProvenance provenance;
  provenance.target = PointerToDotted(target_pointer);
  provenance.sets = sets;
  // The environment's values first; the target's own replace them.
  std::map<std::string, SummaryProvenance::Override> lines;
  const nlohmann::json::json_pointer environment_at(target_pointer + "/environment");
  if (spec_doc.root.contains(environment_at) && spec_doc.root[environment_at].is_string()) {
    provenance.environment = spec_doc.root[environment_at].get<std::string>();
    const nlohmann::json::json_pointer patch_at("/spec/environments/" + EscapePointerToken(provenance.environment));
    if (spec_doc.root.contains(patch_at)) {
      for (auto& [pointer, value] : OverrideLines(spec_doc.root[patch_at])) {
        const nlohmann::json::json_pointer at(pointer);
        lines[pointer] = {PointerToDotted(pointer), value, spec_doc.root.contains(at) ? spec_doc.root[at].dump() : "",
                          provenance.environment};
      }
    }
  }
  const nlohmann::json::json_pointer overrides_at(target_pointer + "/overrides");
  if (spec_doc.root.contains(overrides_at)) {
    for (auto& [pointer, value] : OverrideLines(spec_doc.root[overrides_at])) {
      const nlohmann::json::json_pointer at(pointer);
      lines[pointer] = {PointerToDotted(pointer), value, spec_doc.root.contains(at) ? spec_doc.root[at].dump() : "", ""};
    }
  }
  for (auto& [_, line] : lines) provenance.overrides.push_back(std::move(line));
  return provenance;
}

}  // namespace

std::string ExpectedNamespace(const std::vector<std::pair<std::string, std::string>>& namespaces,
                              const std::string& spec_namespace, const std::string& path) {
  // The engines' objects live in the engines' namespaces (gitops.libsonnet
  // summary namespaces: each engine's directories, engine.libsonnet): the
  // longest directory that holds the file names it.
  size_t best = 0;
  std::string found = spec_namespace;
  for (const auto& [dir, ns] : namespaces) {
    if (dir.size() > best && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
        path[dir.size()] == '/') {
      best = dir.size();
      found = ns;
    }
  }
  return found;
}

bool Compiler::CompileFile(const std::string& path, CompiledSpec* out, Diagnostics* diags) {
  std::unique_ptr<JsonnetExpander> expander = MakeExpander();
  return CompileFile(path, out, diags, &sources_, expander.get());
}

bool Compiler::CompileFile(const std::string& path, CompiledSpec* out, Diagnostics* diags,
                           SourceTexts* sources, JsonnetExpander* expander,
                           LoadedSpec* preloaded) const {
  LoadedSpec loaded;
  if (preloaded == nullptr || !preloaded->attempted) {
    Load(path, &loaded);
    preloaded = &loaded;
  }
  Resolve(*preloaded);
  PreparedSpec prepared;
  if (!Prepare(preloaded, out, &prepared, diags, sources)) return false;
  return CompilePrepared(&prepared, out, diags, sources, expander);
}

bool Compiler::Load(const std::string& path, LoadedSpec* loaded) const {
  loaded->attempted = true;
  loaded->ok = LoadSpecFile(path, &loaded->doc, &loaded->diags, {}, &loaded->yaml11_bools, reader_);
  if (loaded->ok) WarnStaleSchemaCopy(loaded->doc, &loaded->diags);
  if (loaded->ok) loaded->pins_text = ReadPins(reader_, path, &loaded->pins_error);
  return loaded->ok;
}

void DropWhatBlockingCaused(const PreparedSpec& prepared, size_t from, Diagnostics* diags) {
  if (!prepared.blocked) return;
  diags->EraseFrom(from, [&](const Diagnostic& d) { return d.code == "library.error" || InsideRepaired(prepared, d); });
}

bool Compiler::CompilePrepared(PreparedSpec* prepared, CompiledSpec* out, Diagnostics* diags,
                               SourceTexts* sources, JsonnetExpander* expander) const {
  std::map<std::string, TargetExpansion> expansions;
  bool expanded = false;
  {
    const EvalWatch watch(prepared->doc.file);  // time and memory bounds (E10)
    const size_t from = diags->items().size();
    // A blocked spec failed checks whose guarantees the contracts encode
    // (D9): it is expanded for the libraries' findings alone.
    const Contracts* contracts = expander->contracts();
    if (prepared->blocked) expander->CheckContracts(nullptr);
    expanded = expander->Expand(prepared->normalized, prepared->doc, &expansions, diags,
                                &prepared->target_docs);
    expander->CheckContracts(contracts);
    DropWhatBlockingCaused(*prepared, from, diags);
  }
  for (auto& [file, text] : expander->LibrarySources()) (*sources)[file] = text;
  if (!expanded) return false;
  if (!Finish(prepared, &expansions, out, diags)) return false;
  Stamp(*prepared, out, expander);
  return true;
}

bool Compiler::Prepare(LoadedSpec* loaded, CompiledSpec* out, PreparedSpec* prepared,
                       Diagnostics* diags, SourceTexts* sources) const {
  const std::string path = loaded->doc.file;
  prepared->path = path;
  prepared->diagnostics_before = diags->items().size();
  out->path = path;
  Document& doc = prepared->doc;
  doc = std::move(loaded->doc);
  std::set<std::string> yaml11_bools = std::move(loaded->yaml11_bools);
  // A file that is no spec at all -- a spec path symlinked to ~/.netrc or a
  // shadow-style file (E22) -- has none of its lines quoted: what the
  // loader says about its structure is shown, its content is not. Reached
  // through a symlink, it is refused with that alone.
  const bool spec_like = LooksLikeASpec(doc.text);
  std::error_code link_ec;
  // A file that loads is refused alone too: checking it would name its keys.
  const bool symlink = std::filesystem::is_symlink(path, link_ec);
  if (!spec_like && (symlink || (loaded->attempted && loaded->ok))) {
    diags->Error("spec.not-a-spec",
                 path + (symlink ? " is a symlink to a file that is not" : " is not") +
                     " a nemoc spec: it names none of apiVersion, kind, metadata or spec; its content is not shown",
                 {doc.file, 0, 0, ""},
                 (symlink ? "check where the symlink points; " : "") + std::string("nemoc init NAME writes a starter spec"));
    return false;
  }
  diags->Append(loaded->diags);
  if (spec_like) (*sources)[doc.file] = doc.text;
  if (!loaded->attempted || !loaded->ok) return false;
  // cost.h: the priors pinned beside the spec.
  {
    std::string err = loaded->pins_error;
    out->pin_path = PinPath(path);
    prepared->pins_text = loaded->pins_text;
    if (err.empty() && !prepared->pins_text.empty() && !ParsePins(prepared->pins_text, &prepared->pins, &err)) {
      err = "pinned MFU priors: " + err;
    }
    if (!err.empty()) {
      diags->Error("spec.pins", err, {out->pin_path, 0, 0},
                   "fix the file, or delete it: the next build pins nemoc's current priors again");
      return false;
    }
  }

  // A credential pasted into the spec is reported where it was pasted; the
  // scan of the generated tree below catches what arrives another way.
  bool clean = true;
  std::vector<std::string> credentials;  // what was found, to mask in the values
  for (const auto& finding : FindSecrets(doc.text)) {
    credentials.push_back(doc.text.substr(finding.offset, finding.length));
    // The quoted source line must not echo the credential into CI logs.
    std::string& quoted = (*sources)[doc.file];
    for (size_t i = finding.offset + 4; i < finding.offset + finding.length && i < quoted.size(); ++i) {
      if (quoted[i] != '\n') quoted[i] = '*';
    }
    diags->Error("spec.secret",
                 finding.kind + " in the spec: specs reference Secrets by name, never by value",
                 {doc.file, finding.line, finding.column, doc.map.PointerAt(finding.line, finding.column)},
                 "create a Kubernetes Secret and reference it by name (imagePullSecrets, "
                 "model.source.hfTokenSecret); treat the value as leaked and rotate it");
    clean = false;
  }
  // A token split by whitespace (E21: a blank line inside a folded scalar,
  // or a line break in a quoted one) passes the scan of the text above; the
  // pod still gets the key. Each string value with whitespace is scanned
  // again without it, for the token shapes only (prose joined up is no key).
  std::vector<std::pair<const nlohmann::json*, std::string>> stack = {{&doc.root, ""}};
  while (!stack.empty()) {
    const auto [node, pointer] = stack.back();
    stack.pop_back();
    if (node->is_object()) {
      for (const auto& [key, child] : node->items()) stack.push_back({&child, pointer + "/" + EscapePointerToken(key)});
    } else if (node->is_array()) {
      for (size_t k = 0; k < node->size(); ++k) stack.push_back({&(*node)[k], pointer + "/" + std::to_string(k)});
    } else if (node->is_string()) {
      const std::string& value = node->get_ref<const std::string&>();
      if (value.size() < 20 || value.find_first_of(" \t\r\n") == std::string::npos) continue;
      std::string joined;
      for (char ch : value) {
        if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') joined += ch;
      }
      for (const auto& finding : FindSecrets(joined)) {
        if (finding.kind.rfind("plain-text", 0) == 0 || finding.kind.rfind("password in", 0) == 0 ||
            finding.kind == "bearer token") {
          continue;
        }
        diags->Error("spec.secret",
                     finding.kind + " split by whitespace in the spec: specs reference Secrets by name, never by value",
                     doc.map.Locate(pointer),
                     "create a Kubernetes Secret and reference it by name; treat the value as leaked and rotate it");
        clean = false;
        credentials.push_back(value);
        // The quoted lines must not show the pieces either.
        std::string& quoted = (*sources)[doc.file];
        size_t start = 0;
        while (start < value.size()) {
          const size_t end = std::min(value.find_first_of(" \t\r\n", start), value.size());
          const std::string piece = value.substr(start, end - start);
          start = end + 1;
          if (piece.size() < 4) continue;
          for (size_t at = quoted.find(piece); at != std::string::npos; at = quoted.find(piece, at + 1)) {
            std::fill(quoted.begin() + static_cast<long>(at), quoted.begin() + static_cast<long>(at + piece.size()), '*');
          }
        }
        break;
      }
    }
  }
  if (!clean) {
    // D9: a credential does not hide the spec's other problems. Every value
    // holding one is masked (and its subtree's later findings dropped), so
    // no message quotes it; the spec is checked on and never built.
    MaskCredentials(&doc.root, credentials, "", &prepared->repaired);
    prepared->blocked = true;
  }

  bool sets_conflict = false;
  if (!ApplySets(&doc, diags, &sets_conflict)) return false;
  if (sets_conflict) prepared->blocked = true;
  const InputSchema* input_schema = InputSchemaForSpec(doc, diags);
  if (input_schema == nullptr) return false;
  const size_t schema_from = diags->items().size();
  if (!input_schema->Validate(doc, yaml11_bools, diags)) {
    // D9: repaired as the diagnostics say, the spec goes on to the checks
    // after the schema; one that cannot be repaired stops here, with the
    // targets' overrides validated too.
    std::vector<Diagnostic> found(diags->items().begin() + static_cast<long>(schema_from), diags->items().end());
    // A masked credential's value may break its pattern: already reported.
    DropInsideRepaired(*prepared, schema_from, diags);
    Document repaired = doc;
    Diagnostics again;
    auto placeholder = [&](const std::string& pointer) { return input_schema->PlaceholderAt(pointer); };
    std::vector<std::pair<std::string, std::string>> moved;
    if (!RepairSchemaErrors(found, &repaired.root, &prepared->repaired, placeholder, &moved) ||
        !input_schema->Validate(repaired, yaml11_bools, &again)) {
      PrepareTargetOverrides(*input_schema, yaml11_bools, prepared, diags, /*validate_only=*/true);
      return false;
    }
    doc.root = std::move(repaired.root);
    for (const auto& [from, to] : moved) doc.map.Graft(from, to);
    prepared->blocked = true;
  }

  nlohmann::json& normalized = prepared->normalized;
  const size_t checks_from = diags->items().size();
  const bool normalized_ok = Normalize(doc, *input_schema, catalog_, &normalized, diags);
  // Semantic checks run even when normalization reported something, so one
  // run shows every problem; they only need the validated shape.
  prepared->typed = ReadTypedSpec(normalized["spec"]);
  const bool checks_ok = CheckSpec(doc, normalized, prepared->typed, CheckTables{stage_table_, releases_}, diags);
  DropInsideRepaired(*prepared, checks_from, diags);
  if (!normalized_ok) return false;
  if (checks_ok && !prepared->blocked) ReportBrokenContract(doc, prepared->typed, diags);
  // D9: a spec whose checks failed on a valid shape still goes through the
  // libraries' checks and the fit check (compiler.h PreparedSpec.blocked).
  if (!checks_ok) prepared->blocked = true;

  out->project = normalized["metadata"]["name"].get<std::string>();
  out->project_dir = options_.out_dir + "/" + out->project;

  // --target: keep the named targets (each must exist).
  if (!options_.only_targets.empty()) {
    std::vector<std::string> names;
    for (const auto& t : normalized["spec"]["targets"]) names.push_back(t["name"]);
    nlohmann::json kept = nlohmann::json::array();
    bool ok = true;
    for (const auto& wanted : options_.only_targets) {
      if (std::find(names.begin(), names.end(), wanted) == names.end()) {
        std::string suggestion = SuggestClosest(wanted, names);
        diags->Error("usage.target", "--target " + wanted + ": no such target in " + path,
                     doc.map.Locate("/spec/targets", true),
                     suggestion.empty() ? "" : "did you mean '" + suggestion + "'?");
        ok = false;
      }
    }
    if (!ok) return false;
    out->all_targets = options_.only_targets.size() >= names.size();
  }

  // Profiles live in profiles/ or a --jpath directory (never libsonnet/, whose
  // files are building blocks, not profiles).
  std::vector<std::string> known_profiles;
  for (const auto& [name, file] : profile_files_) known_profiles.push_back(name);
  if (!CheckProfilesKnown(doc, normalized, known_profiles, diags)) return false;
  if (!PrepareTargetOverrides(*input_schema, yaml11_bools, prepared, diags, false)) return false;
  CheckTargetNodes(*input_schema, prepared, diags);
  return true;
}

void Compiler::CheckTargetNodes(const InputSchema& input_schema, PreparedSpec* prepared, Diagnostics* diags) const {
  // Issue #48 item 3: the checks that need the accelerator run here, with the
  // spec's others and before any Jsonnet, from the profile's gpuNode data
  // (gpu_node.h). A target whose node its profile cannot name (eks-efa
  // without a known instanceType) is the profile's own check to report.
  // The node fabric (node_fabric.h) likewise, from the profile's nodeFabric.
  static const nlohmann::json kNone = nlohmann::json::object();
  const nlohmann::json::json_pointer rules_at(kGpuNodesAt), fabrics_at(kNodeFabricsAt);
  const nlohmann::json& rules = input_schema.json().contains(rules_at) ? input_schema.json().at(rules_at) : kNone;
  const nlohmann::json& fabric_rules =
      input_schema.json().contains(fabrics_at) ? input_schema.json().at(fabrics_at) : kNone;
  const size_t from = diags->items().size();
  const size_t errors_before = diags->error_count();
  for (const auto& listed : prepared->normalized["spec"]["targets"]) {
    const std::string name = listed["name"].get<std::string>();
    if (!Selected(name)) continue;
    // A target with overrides is checked in its merged spec and document.
    const nlohmann::json& effective = prepared->SpecFor(name);
    const Document& doc = prepared->DocFor(name);
    const nlohmann::json* target = &listed;
    size_t index = 0;
    for (size_t i = 0; i < effective["spec"]["targets"].size(); ++i) {
      if (effective["spec"]["targets"][i]["name"] == name) {
        target = &effective["spec"]["targets"][i];
        index = i;
      }
    }
    const std::string profile = (*target)["profile"].get<std::string>();
    const auto fabric_rule = fabric_rules.find(profile);
    if (fabric_rule != fabric_rules.end()) {
      const std::string fabric = ResolveNodeFabric(*fabric_rule, *target);
      prepared->fabrics[name] = fabric;
      CheckNodeFabric(doc, prepared->TypedFor(name), name, "/spec/targets/" + std::to_string(index), *fabric_rule, fabric,
                      diags);
    }
    const auto rule = rules.find(profile);
    GpuNode node;
    if (rule == rules.end() || !ResolveGpuNode(*rule, *target, &node)) continue;
    const nlohmann::json* gpu = accelerators_.Find(node.accelerator);
    if (gpu == nullptr) {  // a --jpath profile's rules are checked when composed
      const std::string pointer = "/spec/targets/" + std::to_string(index);
      const std::string option = rule->value("option", "");
      diags->Error("profile.accelerator",
                   "target " + name + ": unknown accelerator " + node.accelerator,
                   doc.map.Locate(!option.empty() && doc.map.Has(pointer + "/" + option) ? pointer + "/" + option : pointer),
                   "libsonnet/accelerators.json lists the GPU models nemoc knows");
      continue;
    }
    prepared->nodes[name] = node;
    CheckGpusPerNode(doc, effective["spec"], name, node, diags);
    CheckTargetOnAccelerator(doc, effective["spec"], prepared->TypedFor(name), name, node.accelerator, *gpu, diags);
  }
  DropInsideRepaired(*prepared, from, diags);
  // D9: like CheckSpec's, these errors leave the shape valid -- the spec goes
  // on to the libraries' checks and is never built.
  if (diags->error_count() > errors_before) prepared->blocked = true;
}

bool Compiler::PrepareTargetOverrides(const InputSchema& input_schema,
                                      const std::set<std::string>& spec_yaml11_bools,
                                      PreparedSpec* prepared, Diagnostics* diags,
                                      bool validate_only) const {
  // A target with overrides compiles from the spec with them merged in:
  // validated, normalized and checked like the spec, every value from the
  // overrides located at its own line. What the shared spec already
  // reported is not repeated; what only the merge causes names the target.
  // With validate_only (the spec itself is invalid) the merged spec is only
  // validated, so that one run reports the overrides' mistakes too.
  const Document& doc = prepared->doc;
  const size_t reported = diags->items().size();
  std::set<std::tuple<std::string, std::string, std::string, int, int>> already;
  bool ok = true;
  for (size_t i = 0; i < TargetCount(doc); ++i) {
    if (!HasTargetOverrides(doc, i)) continue;
    const nlohmann::json& target = doc.root["spec"]["targets"][i];
    const std::string name = target.contains("name") && target["name"].is_string()
                                 ? target["name"].get<std::string>()
                                 : "[" + std::to_string(i) + "]";
    if (!Selected(name)) {
      continue;
    }
    // An environment the spec does not define is this target's error.
    if (const std::string environment = TargetEnvironment(doc, i); !environment.empty()) {
      const nlohmann::json& spec = doc.root["spec"];
      std::vector<std::string> defined;
      if (spec.contains("environments") && spec["environments"].is_object()) {
        for (const auto& [key, _] : spec["environments"].items()) defined.push_back(key);
      }
      if (std::find(defined.begin(), defined.end(), environment) == defined.end()) {
        const std::string closest = SuggestClosest(environment, defined);
        std::string list;
        for (const auto& d : defined) list += (list.empty() ? "" : ", ") + d;
        diags->Error("spec.unknown-environment",
                     "spec.targets[" + std::to_string(i) + "].environment: no environment '" + environment +
                         "' in spec.environments" + (defined.empty() ? std::string(" (it defines none)") : " (it defines " + list + ")"),
                     doc.map.Locate("/spec/targets/" + std::to_string(i) + "/environment"),
                     closest.empty() ? "define it under spec.environments, or remove targets[].environment"
                                     : "did you mean '" + closest + "'?");
        ok = false;
        continue;
      }
    }
    std::set<std::string> yaml11_bools = spec_yaml11_bools;
    Document merged_doc = ApplyTargetOverrides(doc, i, &yaml11_bools);
    Diagnostics found;
    // D9 (mistake 12): a --set that this target's overrides or environment
    // replace does nothing for it; say so where the replacing value is.
    if (!options_.sets.empty()) {
      struct Leaf {
        const nlohmann::json* node;
        std::string at;
        size_t prefix;  // the overrides' own pointer: at.substr(prefix) is the spec path
      };
      std::vector<Leaf> leaves;
      const std::string target_ptr = "/spec/targets/" + std::to_string(i);
      std::vector<std::string> sources = {target_ptr + "/overrides"};
      if (const std::string environment = TargetEnvironment(doc, i); !environment.empty()) {
        sources.push_back("/spec/environments/" + EscapePointerToken(environment));
      }
      for (const auto& source : sources) {
        const nlohmann::json::json_pointer ptr(source);
        if (doc.root.contains(ptr)) leaves.push_back({&doc.root.at(ptr), source, source.size()});
      }
      while (!leaves.empty()) {
        const Leaf leaf = leaves.back();
        leaves.pop_back();
        const std::string spec_ptr = "/spec" + leaf.at.substr(leaf.prefix);
        const Location from = doc.map.Locate(spec_ptr);
        if (leaf.at.size() > leaf.prefix && from.file.rfind("--set ", 0) == 0 && doc.map.Has(spec_ptr)) {
          diags->Warning("set.shadowed",
                         "target " + name + ": " + from.file.substr(0, from.file.find('=')) +
                             " does not reach this target: its " +
                             (leaf.at.rfind("/spec/environments/", 0) == 0 ? "environment" : "overrides") + " set " +
                             PointerToDotted(spec_ptr) + " here",
                         doc.map.Locate(leaf.at),
                         "--set spec.targets[" + name + "].overrides." + PointerToDotted(spec_ptr).substr(5) +
                             "=... sets it for this target");
          continue;
        }
        if (leaf.node->is_object()) {
          for (const auto& [key, child] : leaf.node->items()) {
            leaves.push_back({&child, leaf.at + "/" + EscapePointerToken(key), leaf.prefix});
          }
        }
      }
    }
    nlohmann::json merged;
    TypedSpec merged_typed;
    bool target_ok = input_schema.Validate(merged_doc, yaml11_bools, &found);
    // D9: what only a later check finds is reported in this run too. The
    // merged spec is repaired like the spec (schema_repair.h) and checked on;
    // its target then compiles for the libraries' findings only (blocked).
    bool go_on = target_ok;
    if (!target_ok && !validate_only) {
      Document repaired = merged_doc;
      Diagnostics again;
      auto placeholder = [&](const std::string& pointer) { return input_schema.PlaceholderAt(pointer); };
      std::vector<std::pair<std::string, std::string>> moved;
      go_on = RepairSchemaErrors(found.items(), &repaired.root, &prepared->repaired, placeholder, &moved) &&
              input_schema.Validate(repaired, yaml11_bools, &again);
      if (go_on) {
        merged_doc.root = std::move(repaired.root);
        for (const auto& [from, to] : moved) merged_doc.map.Graft(from, to);
      }
    }
    bool checked_on = false;
    if (go_on && !validate_only) {
      const size_t checks_from = found.items().size();
      const bool normalized_ok = Normalize(merged_doc, input_schema, catalog_, &merged, &found);
      merged_typed = ReadTypedSpec(merged["spec"]);
      const bool checks_ok =
          CheckSpec(merged_doc, merged, merged_typed, CheckTables{stage_table_, releases_}, &found);
      DropInsideRepaired(*prepared, checks_from, &found);
      if (target_ok && normalized_ok && checks_ok && !prepared->blocked) {
        ReportBrokenContract(merged_doc, merged_typed, &found);
      }
      checked_on = normalized_ok && (!target_ok || !checks_ok);
      target_ok = target_ok && checks_ok && normalized_ok;
    }
    // What the shared spec reported, looked up per diagnostic (a scan per
    // diagnostic was quadratic in a spec with thousands of errors, E20).
    if (already.empty()) {
      for (size_t k = 0; k < reported; ++k) {
        const Diagnostic& seen = diags->items()[k];
        already.emplace(seen.code, seen.message, seen.location.file, seen.location.line, seen.location.column);
      }
    }
    for (Diagnostic d : found.items()) {
      if (already.count({d.code, d.message, d.location.file, d.location.line, d.location.column})) continue;
      d.message = "target " + name + ": " + d.message;
      diags->Add(std::move(d));
    }
    if (checked_on) {
      prepared->blocked = true;
      target_ok = true;
    }
    if (!target_ok || validate_only) {
      ok = ok && target_ok;
      continue;
    }
    prepared->normalized["targetSpecs"][name] = std::move(merged);
    prepared->target_docs.emplace(name, std::move(merged_doc));
    prepared->target_typed.emplace(name, std::move(merged_typed));
  }
  return ok;
}

bool Compiler::Finish(PreparedSpec* prepared, std::map<std::string, TargetExpansion>* expanded,
                      CompiledSpec* out, Diagnostics* diags) const {
  const size_t finish_from = diags->items().size();
  const std::string& path = prepared->path;
  const Document& spec_doc = prepared->doc;
  std::map<std::string, TargetExpansion>& expansions = *expanded;
  const nlohmann::json& normalized = prepared->normalized;

  const std::string spec_name = std::filesystem::path(path).filename().string();
  bool ok = true;
  size_t index = 0;
  // D1: two targets of one cluster (dev and prod environments) writing the
  // same object -- kind, namespace, name -- would take it from each other on
  // every sync. Per cluster, each object's first writer.
  struct Writer {
    std::string target;
    std::string file;
  };
  std::map<std::string, std::map<std::string, Writer>> written;  // cluster -> identity -> writer
  nlohmann::json new_pins = nlohmann::json::object();  // cost.h: priors chosen now, not pinned yet
  for (const auto& target : normalized["spec"]["targets"]) {
    const std::string pointer = "/spec/targets/" + std::to_string(index++);
    const std::string name = target["name"].get<std::string>();
    if (!Selected(name)) {
      continue;
    }
    // A target with overrides is checked, planned and summarised from its
    // merged spec, located in its merged document.
    const nlohmann::json& effective = prepared->SpecFor(name);
    const Document& doc = prepared->DocFor(name);
    auto it = expansions.find(name);
    if (it == expansions.end()) {
      diags->Error("library.output", "the libraries produced nothing for target " + name);
      ok = false;
      continue;
    }
    bool rendered = true;
    for (auto& [file, object] : it->second.files) {
      std::string err;
      if (!RenderEmbeddedDocuments(&object, &err)) {
        diags->Error("library.document", "target " + name + ": " + file + ": " + err);
        rendered = false;
      }
    }
    if (!rendered) {
      ok = false;
      continue;
    }
    // What the libraries say about the target, typed (facts.h); the profile
    // names the GPU model, whose memory the fit check needs.
    TargetFacts facts;
    std::string facts_err;
    if (!ParseLibraryFacts(it->second.summary, &facts.library, &facts_err)) {
      diags->Error("library.facts", "target " + name + ": " + facts_err);
      ok = false;
      continue;
    }
    const auto& spec = effective["spec"];
    const TypedSpec& typed = prepared->TypedFor(name);  // read once in Prepare
    // The target's GPU node, from its profile's data (Prepare checked it:
    // CheckTargetNodes).
    if (const auto node = prepared->nodes.find(name); node != prepared->nodes.end()) {
      const std::string& accelerator = node->second.accelerator;
      facts.accelerator = accelerator;
      const nlohmann::json* gpu = accelerators_.Find(accelerator);
      // A target that trains shows the GPU model and each training stage's
      // estimate (SUMMARY.md, plan).
      if (gpu != nullptr && spec["stages"].contains("train")) {
        facts.gpu_model = (*gpu)["model"].get<std::string>();
        facts.capacity_gb = (*gpu)["memoryGB"].get<double>();
        const ModelArchitecture architecture = ModelArchitecture::FromJson(spec["model"]["architecture"]);
        for (const std::string& key : typed.TrainingKeys()) {
          facts.memory[key] = EstimateMemory(*typed.Training(key), architecture);
        }
        // Issue #46 item 3: the cost estimate's peak and MFU prior per
        // training stage, pinned beside the spec once chosen (cost.h).
        if (gpu->contains("peakTflops")) {
          for (const auto& [precision, peak] : (*gpu)["peakTflops"].items()) facts.peak_tflops[precision] = peak.get<double>();
        }
        for (const std::string& key : TrainingStages(spec["stages"])) {
          const std::string precision = spec["stages"][key]["precision"].get<std::string>();
          const std::string pin = PriorKey(spec["model"], accelerator, precision);
          MfuPrior prior;
          if (prepared->pins.contains(pin)) {
            prior.found = true;
            prior.pinned = true;
            prior.mfu = prepared->pins[pin]["mfu"].get<double>();
            prior.source = prepared->pins[pin]["source"].get<std::string>();
          } else {
            prior = TablePrior(*gpu, spec["model"], precision, catalog_);
            if (prior.found) new_pins[pin] = {{"mfu", prior.mfu}, {"source", prior.source}};
          }
          if (prior.found) facts.priors[key] = prior;
          else {
            const std::string family = spec["model"].value("family", std::string());
            facts.no_prior[key] = (family.empty() ? "no family for a custom model" : "no published " + precision +
                                   " throughput of the " + family + " family on " + accelerator) +
                                  " in nemoc's table; `nemoc metrics --pin` records a measured MFU as \"" + pin +
                                  "\" in .nemoc/" + std::filesystem::path(out->pin_path).filename().string();
          }
        }
      }
    }
    // D3: spec.patches change the expanded objects before anything verifies
    // them (object_patches.h).
    if (!ApplyObjectPatches(name, spec, doc, facts.library.stage_dirs, kube_schemas_.get(), &it->second.files,
                            &facts.patches, diags)) {
      ok = false;
      continue;
    }
    CompiledTarget compiled;
    compiled.name = name;
    compiled.dir = out->project_dir + "/" + name;
    // The engines' objects live in the engines' namespaces: verify them in
    // groups by directory (gitops/argocd, gitops/platform/flux, ...).
    std::map<std::string, std::map<std::string, nlohmann::json>> by_namespace;
    for (const auto& [file, object] : it->second.files) {
      by_namespace[ExpectedNamespace(facts.library.gitops.namespaces, effective["spec"]["namespace"].get<std::string>(), file)]
          .emplace(file, object);
    }
    bool verified = true;
    for (const auto& [expected, group] : by_namespace) {
      verified = VerifyObjects(group, expected, compiled.dir, kube_schemas_.get(), diags,
                               &it->second.pod_name_suffixes) &&
                 verified;
    }
    if (!verified) {
      ok = false;
      continue;
    }
    // The platform bundle goes to its cluster's tree (cluster_bundle.h); the
    // target keeps what it contributes.
    const nlohmann::json contribution = TakeContribution(&it->second.files, facts.library.gitops.cluster);
    compiled.cluster_location =
        doc.map.Locate(target.contains("cluster") ? pointer + "/cluster" : pointer);
    const nlohmann::json& cluster = facts.library.gitops.cluster;
    const std::string cluster_name = cluster.is_object() ? cluster.value("name", "") : "";
    if (!cluster_name.empty()) {
      auto& objects = written[cluster_name];
      std::string first_shared, other_target;
      size_t shared = 0;
      for (const auto& [file, object] : it->second.files) {
        if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) continue;
        const std::string api = object.value("apiVersion", "");
        const std::string id = api.substr(0, api.find('/') == std::string::npos ? 0 : api.find('/')) + "/" +
                               object.value("kind", "") + " " +
                               object["metadata"].value("namespace", "") + "/" + object["metadata"].value("name", "");
        auto [at, inserted] = objects.emplace(id, Writer{name, file});
        if (inserted || at->second.target == name) continue;
        if (shared++ == 0) {
          first_shared = object.value("kind", "") + " " + object["metadata"].value("namespace", "") + "/" +
                         object["metadata"].value("name", "") + " (" + file + ")";
          other_target = at->second.target;
        }
      }
      if (shared > 0) {
        const std::string at = target.contains("environment") ? pointer + "/environment" : pointer;
        diags->Error("spec.targets-collide",
                     "targets " + other_target + " and " + name + " both deliver to cluster " + cluster_name +
                         " and would both write " + std::to_string(shared) + " object" + (shared == 1 ? "" : "s") +
                         " (first " + first_shared + "); each would take them from the other on every sync",
                     doc.map.Locate(at),
                     "give each target on one cluster its own namespace: spec.environments.<name>.namespace, or "
                     "targets[].overrides.namespace");
        ok = false;
        continue;
      }
    }
    compiled.plan = PlanTarget(effective, typed, target, facts, it->second.files, compiled.dir);
    compiled.tree = BuildTree(it->second.files, it->second.kustomizations,
                              RenderSummary(effective, typed, target, facts, compiled.plan, it->second.files,
                                            spec_name, Provenance(spec_doc, pointer, options_.sets)));
    if (!contribution.is_null()) compiled.tree[kContributionFile] = contribution.dump(1) + "\n";
    // Last gate before disk: no credential-shaped text in any generated file.
    if (!ScanTreeForSecrets(compiled.tree, compiled.dir, diags)) {
      ok = false;
      continue;
    }
    compiled.objects = std::move(it->second.files);
    out->targets.push_back(std::move(compiled));
  }
  if (ok && !new_pins.empty()) {
    nlohmann::json pins = prepared->pins;
    for (const auto& [key, row] : new_pins.items()) pins[key] = row;
    out->pin_write = PinsText(pins);
  }
  // A spec with warnings or notes is not stamped: skipping it next time would
  // hide them.
  prepared->clean = diags->items().size() == prepared->diagnostics_before;
  // D9: a spec with errors before its expansion was only checked on.
  DropWhatBlockingCaused(*prepared, finish_from, diags);
  return ok && !prepared->blocked;
}

void Compiler::Stamp(const PreparedSpec& prepared, CompiledSpec* out, JsonnetExpander* expander) const {
  const SpecInputs inputs{std::filesystem::path(prepared.path).filename().string(), prepared.doc.text,
                          options_.sets, options_.jpaths,
                          out->pin_write.empty() ? prepared.pins_text : out->pin_write};
  for (auto& target : out->targets) {
    nemoc::Stamp stamp;
    if (prepared.clean && stamps_ != nullptr &&
        MakeStamp(*stamps_, inputs, target.name, expander, target.objects, target.tree, &stamp)) {
      target.stamp = StampLines(stamp);
    }
    target.objects.clear();  // only the stamp needed them
  }
}

}  // namespace nemoc
