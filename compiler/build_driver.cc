#include "build_driver.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "eval_watchdog.h"
#include "jsonnet_expander.h"

namespace nemoc {

int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

namespace {

// Specs expanded in one Jsonnet evaluation stop growing at this many targets:
// the evaluation's fixed cost (std library and bundled libraries parsed
// again, ~50-100 ms) is then ~1-3 ms per target, while the heap an evaluation
// holds until it ends (all of its targets' objects, ~2 MiB each) stays
// bounded. One worker: 64. Several: 16 each, so that the workers' heaps
// together stay under issue #47's 256 MiB peak at 1,000 synthetic targets
// (-j2, Release, THP; 2026-11-30, alternated runs): 64 -> 369-401 MiB,
// 32 -> 293-324 MiB, 16 -> 240-249 MiB for +6 % wall and +7 % CPU. (Issue
// #7, before the trees were staged as specs compile: 32 -> 230 MB, 64 -> 260
// MB, 128 -> 310-320 MB.) A batch never exceeds a worker's share of the
// specs anyway, so builds of a few specs are unaffected.
constexpr size_t kBatchTargetsAlone = 64;
constexpr size_t kBatchTargetsEach = 16;

struct SpecResult {
  bool ok = false;
  CompiledSpec spec;
  Diagnostics diags;
  SourceTexts sources;
  PreparedSpec prepared;
};

void Done(SpecResult* result, const DriverOptions& options) {
  // What the spec was prepared from is no longer needed (its text is in `sources`).
  result->prepared.doc = Document();
  result->prepared.target_docs.clear();
  result->prepared.normalized = nullptr;
  // Sources are only needed to quote diagnostics; a clean spec's library
  // texts would otherwise be held for every spec until the end.
  if (result->diags.empty()) result->sources.clear();
  // Issue #47: a build stages the spec's trees on disk now, not at the end.
  if (result->ok && options.compiled) options.compiled(&result->spec);
}

// Expands and finishes the prepared specs `batch` (indices into `results`):
// one evaluation for all of them when there are several, and one at a time
// (with Expand's error attribution) when that evaluation fails.
void CompileBatch(const Compiler& compiler, const std::vector<size_t>& batch,
                  JsonnetExpander* expander, std::vector<SpecResult>* results, const DriverOptions& options) {
  std::vector<JsonnetExpander::BatchSpec> items;
  for (size_t i : batch) {
    const PreparedSpec& p = (*results)[i].prepared;
    items.push_back({&p.normalized, &p.doc, &p.target_docs});
  }
  std::vector<std::map<std::string, TargetExpansion>> expansions;
  std::vector<Diagnostics> diags;
  std::vector<bool> ok;
  bool batched = false;
  if (batch.size() > 1) {
    const EvalWatch watch((*results)[batch[0]].prepared.doc.file + " (evaluated with " +
                          std::to_string(batch.size() - 1) + " more specs)");
    batched = expander->ExpandBatch(items, &expansions, &diags, &ok);
  }
  if (batched) {
    for (size_t k = 0; k < batch.size(); ++k) {
      SpecResult& r = (*results)[batch[k]];
      const size_t from = r.diags.items().size();
      r.diags.Append(diags[k]);
      DropWhatBlockingCaused(r.prepared, from, &r.diags);
      // What this spec alone imports: its stamp and quoted sources.
      expander->RecordImports(r.prepared.normalized);
      for (auto& [file, text] : expander->LibrarySources()) r.sources[file] = text;
      r.ok = ok[k] && compiler.Finish(&r.prepared, &expansions[k], &r.spec, &r.diags);
      if (r.ok) compiler.Stamp(r.prepared, &r.spec, expander);
      expansions[k].clear();
      Done(&r, options);
    }
    return;
  }
  for (size_t i : batch) {
    SpecResult& r = (*results)[i];
    r.ok = compiler.CompilePrepared(&r.prepared, &r.spec, &r.diags, &r.sources, expander);
    Done(&r, options);
  }
}

}  // namespace

bool CompileSpecs(const Compiler& compiler, const std::vector<std::string>& specs,
                  const DriverOptions& options, std::vector<CompiledSpec>* compiled,
                  Diagnostics* diags, SourceTexts* sources) {
  std::vector<SpecResult> results(specs.size());
  const int wanted = options.jobs > 0 ? options.jobs : DefaultJobs();
  const size_t workers = std::max<size_t>(1, std::min<size_t>(wanted, specs.size()));
  // At most a worker's share of the specs per batch, so every worker gets some.
  const size_t batch_specs = (specs.size() + workers - 1) / workers;
  const size_t batch_targets_max = workers == 1 ? kBatchTargetsAlone : kBatchTargetsEach;
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t started = 0;
  auto work = [&] {
    std::unique_ptr<JsonnetExpander> expander = compiler.MakeExpander();  // one VM per thread
    std::vector<size_t> batch;
    size_t batch_targets = 0;
    for (size_t i = next.fetch_add(1); i < specs.size(); i = next.fetch_add(1)) {
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(started++, specs.size(), specs[i]);
      }
      SpecResult& result = results[i];
      LoadedSpec loaded;
      if (options.skip_up_to_date &&
          compiler.UpToDate(specs[i], &result.spec, expander.get(), &loaded)) {
        result.ok = true;
        continue;
      }
      result.spec = CompiledSpec{};
      if (!loaded.attempted) compiler.Load(specs[i], &loaded);
      compiler.Resolve(loaded);
      if (!compiler.Prepare(&loaded, &result.spec, &result.prepared, &result.diags, &result.sources)) {
        Done(&result, options);
        continue;
      }
      if (result.prepared.blocked) {  // checked on alone, never built (D9)
        result.ok = compiler.CompilePrepared(&result.prepared, &result.spec, &result.diags, &result.sources,
                                             expander.get());
        Done(&result, options);
        continue;
      }
      batch.push_back(i);
      batch_targets += result.prepared.normalized["spec"]["targets"].size();
      // Near the end, a batch stops at its share of what is left, so that no
      // worker is still expanding a large batch while the others are idle.
      const size_t unclaimed = specs.size() - i - 1;
      if (batch_targets >= batch_targets_max || batch.size() >= batch_specs ||
          batch.size() * workers >= unclaimed + batch.size()) {
        CompileBatch(compiler, batch, expander.get(), &results, options);
        batch.clear();
        batch_targets = 0;
      }
    }
    if (!batch.empty()) CompileBatch(compiler, batch, expander.get(), &results, options);
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
