// nemoc schema: the input JSON Schema, for editors and other tools.
#include "commands.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "data_dir.h"

namespace nemoc {

const char kSchemaHelp[] =
    "Print the JSON Schema of nemoc specs (draft-07) on stdout. Editors with the YAML\n"
    "language server complete and check a spec whose first line is\n"
    "  # yaml-language-server: $schema=<path or URL of the schema>\n"
    "With --jpath DIR, the schema holds what DIR brings too: its profiles' options,\n"
    "its runtimes, platform components and stages (as `nemoc build --jpath DIR` checks them).\n"
    "Example: nemoc schema > .nemoc/project.schema.json";

bool ReadComposedSchema(const std::vector<std::string>& jpaths, nlohmann::json* schema, Diagnostics* diags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    diags->Error("internal.data-dir", err);
    return false;
  }
  CompileOptions options;
  options.jpaths = jpaths;
  Compiler compiler(data, options);
  return compiler.Init(diags) && compiler.ComposedInputSchema(schema, diags);
}

int RunSchema(const SchemaFlags& flags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", err.c_str());
    return kExitInternal;
  }
  if (!flags.jpaths.empty()) {
    Diagnostics diags;
    nlohmann::json schema;
    if (!ReadComposedSchema(flags.jpaths, &schema, &diags)) {
      PrintDiagnostics(diags, {});
      return ExitCodeFor(diags);
    }
    const std::string text = schema.dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  // The built-in schema as committed, byte for byte (editors' copies diff clean).
  std::ifstream in(data.schema(), std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "nemoc: error: cannot read %s\n", data.schema().c_str());
    return kExitInternal;
  }
  const std::string text = buffer.str();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace nemoc
