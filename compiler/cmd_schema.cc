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
    "Example: nemoc schema > .nemoc/project.schema.json";

int RunSchema() {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    std::fprintf(stderr, "nemoc: error: %s\n", err.c_str());
    return kExitInternal;
  }
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
