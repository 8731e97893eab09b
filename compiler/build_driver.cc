#include "build_driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "jsonnet_expander.h"

namespace nemoc {

int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace {

struct SpecResult {
  bool ok = false;
  CompiledSpec spec;
  Diagnostics diags;
  SourceTexts sources;
};

void CompileOne(const Compiler& compiler, const std::string& path, const DriverOptions& options,
                JsonnetExpander* expander, SpecResult* result) {
  LoadedSpec loaded;
  if (options.skip_up_to_date && compiler.UpToDate(path, &result->spec, expander, &loaded)) {
    result->ok = true;
    return;
  }
  result->spec = CompiledSpec{};
  result->ok = compiler.CompileFile(path, &result->spec, &result->diags, &result->sources,
                                    expander, &loaded);
  // Sources are only needed to quote diagnostics; a clean spec's library
  // texts would otherwise be held for every spec until the end.
  if (result->diags.empty()) result->sources.clear();
}

}  // namespace

bool CompileSpecs(const Compiler& compiler, const std::vector<std::string>& specs,
                  const DriverOptions& options, std::vector<CompiledSpec>* compiled,
                  Diagnostics* diags, SourceTexts* sources) {
  std::vector<SpecResult> results(specs.size());
  const int wanted = options.jobs > 0 ? options.jobs : DefaultJobs();
  const size_t workers = std::max<size_t>(1, std::min<size_t>(wanted, specs.size()));
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t started = 0;
  auto work = [&] {
    std::unique_ptr<JsonnetExpander> expander = compiler.MakeExpander();  // one VM per thread
    for (size_t i = next.fetch_add(1); i < specs.size(); i = next.fetch_add(1)) {
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(started++, specs.size(), specs[i]);
      }
      CompileOne(compiler, specs[i], options, expander.get(), &results[i]);
    }
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
  }
  bool ok = true;
  for (auto& result : results) {
    diags->Append(result.diags);
    for (auto& [file, text] : result.sources) (*sources)[file] = std::move(text);
    if (result.ok) {
      compiled->push_back(std::move(result.spec));
    } else {
      ok = false;
    }
  }
  return ok;
}

}  // namespace nemoc
