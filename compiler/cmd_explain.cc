// nemoc explain: documentation of a spec field from the input schema.
#include "commands.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "data_dir.h"
#include "explain.h"

namespace nemoc {

const char kExplainHelp[] =
    "Document a spec field from the input schema, like kubectl explain: its type,\n"
    "default, allowed values, bounds and description, then the fields below it.\n"
    "PATH is dotted from the top of a spec; list items are entered transparently.\n"
    "Examples:\n"
    "  nemoc explain spec.stages.train.parallelism\n"
    "  nemoc explain spec.targets.kueue\n"
    "  nemoc explain spec --recursive\n"
    "  nemoc explain --jpath DIR spec.stages.publish   (a stage, profile option or runtime of DIR)";

namespace {

bool ReadInputSchema(nlohmann::json* schema, Diagnostics* diags) {
  DataDir data;
  std::string err;
  if (!FindDataDir(&data, &err)) {
    diags->Error("internal.data-dir", err);
    return false;
  }
  std::ifstream in(data.schema(), std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  *schema = nlohmann::json::parse(buffer.str(), nullptr, false);
  if (!in || schema->is_discarded()) {
    diags->Error("internal.schema", "cannot read " + data.schema());
    return false;
  }
  return true;
}

}  // namespace

int RunExplain(const ExplainFlags& flags) {
  Diagnostics diags;
  nlohmann::json schema;
  std::string text;
  const bool read = flags.jpaths.empty() ? ReadInputSchema(&schema, &diags)
                                         : ReadComposedSchema(flags.jpaths, &schema, &diags);
  if (!read || !Explain(schema, flags.path, flags.recursive, &text, &diags)) {
    PrintDiagnostics(diags, {});
    return ExitCodeFor(diags);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace nemoc
