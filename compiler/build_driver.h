// Compiles many specs at once: a small pool of worker threads, each with its
// own Jsonnet VM, taking specs in order from a shared counter. A worker
// prepares the specs it takes (no Jsonnet) and expands up to 64 targets' worth
// of them (16 each when there are several workers) in one evaluation (JsonnetExpander::ExpandBatch): libjsonnet 0.18
// pays ~50-100 ms per evaluation before it evaluates anything. Results and
// diagnostics come back in the order the specs were given, and each spec's
// output is what it would be alone, so output and messages are the same
// whatever the number of threads.
#ifndef NEMOC_BUILD_DRIVER_H_
#define NEMOC_BUILD_DRIVER_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler.h"
#include "diagnostic.h"

namespace nemoc {

struct DriverOptions {
  int jobs = 0;                  // worker threads; <= 0 means DefaultJobs()
  bool skip_up_to_date = false;  // incremental: reuse trees whose stamp matches
  // Called (serialised, from the worker threads) as each spec starts:
  // (specs started before it, count, path).
  std::function<void(size_t, size_t, const std::string&)> progress;
  // Called from the worker threads (not serialised) with each spec that
  // compiled, as soon as it has: `build` stages its trees on disk and keeps
  // only what the rest of the run reads (issue #47: the trees of 1,000
  // targets were held until the swap). Not called for a spec that failed.
  std::function<void(CompiledSpec*)> compiled;
};

/// The number of hardware threads (at least 1).
int DefaultJobs();

/// Compiles `specs` with `compiler` (Init already called). Every spec that
/// compiled is appended to `compiled` (in input order); all diagnostics are
/// added to `diags` in input order, with the source texts they quote added
/// to `sources`. Returns false when any spec failed.
bool CompileSpecs(const Compiler& compiler, const std::vector<std::string>& specs,
                  const DriverOptions& options, std::vector<CompiledSpec>* compiled,
                  Diagnostics* diags, SourceTexts* sources);

}  // namespace nemoc

#endif  // NEMOC_BUILD_DRIVER_H_
