// libFuzzer target: the YAML loader (compiler/spec_loader.h) on arbitrary bytes.
//
// Any diagnostic is a normal outcome. What counts as a bug: a sanitizer report,
// an exception escaping LoadSpecText (it promises never to throw), a return
// value that disagrees with the diagnostics it appended, or a loaded document
// that cannot be serialized as JSON (the later stages dump it). Diagnostics
// are rendered against the text they point into, as the command line does.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "diagnostic.h"
#include "source_map.h"
#include "spec_loader.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_loader: contract violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  nemoc::Document doc;
  nemoc::Diagnostics diags;
  std::set<std::string> yaml11_bools;
  const bool ok = nemoc::LoadSpecText("fuzz.yaml", std::move(text), &doc, &diags, {},
                                      &yaml11_bools);

  if (ok == diags.has_errors()) Fail("return value disagrees with the errors appended");
  if (ok) {
    // Every later stage dumps the document (schema validation, Jsonnet);
    // this throws on invalid UTF-8, which the loader must have refused.
    (void)doc.root.dump();
  }
  // Quote every diagnostic the way the command line does.
  (void)nemoc::RenderText(diags, {{doc.file, doc.text}}, /*color=*/false);
  return 0;
}
