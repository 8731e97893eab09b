// nemoc profiles: the cloud profiles nemoc can build for, as their files
// describe themselves (compiler/profiles.h).
#include "commands.h"

#include "secret_scanner.h"

#include <cstdio>

#include "data_dir.h"
#include "diagnostic.h"
#include "profiles.h"

namespace nemoc {

const char kProfilesHelp[] =
    "List the cloud profiles a target can name (spec.targets[].profile): nemoc's own\n"
    "(profiles/) and every profile of the --jpath directories, with its description,\n"
    "default runtime, the target options it reads and whether `nemoc init` has a\n"
    "starter for it. A profile is one file; docs/extending.md shows how to add one.\n"
    "Examples:\n"
    "  nemoc profiles\n"
    "  nemoc profiles --jpath platform/profiles -o json";

int RunProfiles(const ProfilesFlags& flags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", ForTerminal(err).c_str());
    return kExitInternal;
  }
  Diagnostics diags;
  const std::vector<ProfileInfo> profiles = ListProfiles(data, flags.jpaths, &diags);
  if (flags.names) {
    for (const auto& p : profiles) std::printf("%s\n", p.name.c_str());
  } else if (flags.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : profiles) {
      out.push_back({{"name", p.name},
                     {"file", p.file},
                     {"builtin", p.builtin},
                     {"description", p.description["description"]},
                     {"defaultRuntime", p.description["defaultRuntime"]},
                     {"options", p.description["options"]},
                     {"starter", p.description["starter"]}});
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (const auto& p : profiles) {
      std::string options;
      for (const auto& [field, _] : p.description["options"].items()) options += (options.empty() ? "" : ", ") + field;
      // A --jpath profile's strings reach the terminal escaped and masked
      // (E23: an OSC 52 sequence in a description wrote the clipboard).
      auto shown = [](const std::string& s) { return ForTerminal(MaskSecrets(s)); };
      const nlohmann::json& d = p.description;
      const std::string description = d.contains("description") && d["description"].is_string() ? d["description"].get<std::string>() : "";
      const std::string runtime = d.contains("defaultRuntime") && d["defaultRuntime"].is_string() ? d["defaultRuntime"].get<std::string>() : "";
      std::printf("%s%s\n  %s\n  runtime %s by default; target options: %s; nemoc init: %s\n",
                  shown(p.name).c_str(), p.builtin ? "" : (" (" + shown(p.file) + ")").c_str(),
                  shown(description).c_str(), shown(runtime).c_str(), options.empty() ? "none" : shown(options).c_str(),
                  p.description["starter"].is_object() ? "a starter" : "no starter");
    }
  }
  if (!diags.items().empty()) {
    // A profile that does not evaluate (a member missing, a Jsonnet error).
    const std::string text = RenderText(diags, {});
    std::fwrite(text.data(), 1, text.size(), stderr);
    return kExitInvalid;
  }
  return kExitOk;
}

}  // namespace nemoc
