// Training throughput from a NeMo DLLogger log (dllogger.json): average step
// time over a step window, tokens/s, achieved TFLOPS per GPU and model FLOPs
// utilization (MFU), as gpu-recipes' training_metrics tool computes them but
// with model FLOPs from the architecture instead of a lookup table.
#ifndef NEMOC_METRICS_H_
#define NEMOC_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnostic.h"

namespace nemoc {

struct StepTiming {
  int64_t step = 0;
  double seconds = 0;  // data["train_step_timing in s"]
  double consumed_samples = -1;  // data["consumed_samples"], -1 when the record has none
  int line = 0;  // of the record in the log
};

/// Reads DLLogger records: `DLLL {json}` one per line (what DLLogger writes),
/// or pretty-printed over several lines (as READMEs show them). Records
/// without a numeric step ("PARAMETER") or without train_step_timing are
/// skipped; a record that is not JSON is an error located at its line.
bool ParseDllogger(const std::string& text, const std::string& file, std::vector<StepTiming>* steps,
                   Diagnostics* diags);

/// Model FLOPs per sample (one sequence, forward and backward, no activation
/// recomputation), the Megatron formula (Narayanan et al. 2021, with GQA,
/// gated MLPs and MoE top-k):
///   s·L·h²·(12 + 12·G/A + 6·m·k·F/h + 12·s/h + 6·V/(L·h))
/// s sequence, L layers, h hidden, A heads, G query groups, F ffn hidden, V
/// vocabulary, m = 3 MLP matrices when gated (swiglu) else 2, k = experts per
/// token (moeTopK, 1 for dense models).
double ModelFlopsPerSample(const nlohmann::json& architecture, int64_t seq_length);

struct MetricsInput {
  double flops_per_sample = 0;
  int64_t global_batch = 0;  // sequences per step
  int64_t seq_length = 0;
  int64_t gpus = 0;
  double peak_tflops = 0;  // per GPU, for the training precision
};

struct Metrics {
  int64_t first_step = 0, last_step = 0;
  int64_t steps = 0;  // records averaged
  double step_seconds = 0;
  double samples_per_second = 0;
  double tokens_per_second = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;  // a fraction of peak_tflops
};

/// Averages the steps with start <= step <= end (inclusive, as upstream).
/// False with *err when no step is in the window.
bool ComputeMetrics(const std::vector<StepTiming>& steps, int64_t start, int64_t end,
                    const MetricsInput& input, Metrics* metrics, std::string* err);

/// Warnings when the log and the spec disagree, located in `file`:
///   - metrics.batch: consumed_samples grows by other than the spec's global
///     batch per step between two records of the window (NeMo logs the
///     samples consumed after each step: (step + 1) × global batch);
///   - metrics.mfu: MFU above 100 %: GPUs, batch or sequence length differ
///     from the run's, or the log is from another spec.
void CheckMetrics(const std::vector<StepTiming>& steps, const MetricsInput& input, const Metrics& metrics,
                  const std::string& file, Diagnostics* diags);

/// "A:B", "A:" (to the last step) or "A" (that step alone).
bool ParseStepWindow(const std::string& text, int64_t* start, int64_t* end, std::string* err);

}  // namespace nemoc

#endif  // NEMOC_METRICS_H_
