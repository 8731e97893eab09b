#include "metrics.h"

#include "architecture.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace nemoc {

namespace {

constexpr char kMarker[] = "DLLL";
constexpr char kStepTime[] = "train_step_timing in s";

// Ranges of [start, end) of each record: from a line starting with the marker
// to the next such line.
struct Record {
  size_t begin = 0, end = 0;
  int line = 0;
};

std::vector<Record> SplitRecords(const std::string& text) {
  std::vector<Record> records;
  size_t pos = 0;
  int line = 1;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    if (text.compare(pos, sizeof kMarker - 1, kMarker) == 0) {
      if (!records.empty()) records.back().end = pos;
      records.push_back({pos + sizeof kMarker - 1, text.size(), line});
    }
    pos = eol + 1;
    ++line;
  }
  return records;
}

bool ParseInt(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 15) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *value = v;
  return true;
}

}  // namespace

bool ParseDllogger(const std::string& text, const std::string& file, std::vector<StepTiming>* steps,
                   Diagnostics* diags) {
  const auto records = SplitRecords(text);
  if (records.empty()) {
    diags->Error("metrics.no-records", "no DLLogger records (lines starting with DLLL) in " + file,
                 {file, 0, 0},
                 "pass the dllogger.json of rank 0 (<results>/<experiment>/dllogger/rank-0/dllogger.json)");
    return false;
  }
  bool ok = true;
  // Bad records are reported up to kMaxReported, then counted (E19: 40k bad
  // records printed 3.2 MB in 13 s, each located in the whole log).
  constexpr size_t kMaxReported = 20;
  size_t bad = 0;
  auto report = [&](const std::string& message, int line) {
    if (++bad <= kMaxReported) diags->Error("metrics.bad-record", message, {file, line, 1});
  };
  for (const auto& r : records) {
    nlohmann::json record =
        nlohmann::json::parse(text.begin() + r.begin, text.begin() + r.end, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      report("DLLogger record is not a JSON object", r.line);
      ok = false;
      continue;
    }
    if (!record.contains("step") || !record["step"].is_number_integer()) continue;  // PARAMETER
    if (!record.contains("data") || !record["data"].is_object()) continue;
    const auto& data = record["data"];
    if (!data.contains(kStepTime) || !data[kStepTime].is_number()) continue;
    const double seconds = data[kStepTime].get<double>();
    if (!std::isfinite(seconds) || seconds <= 0) {
      report(std::string(kStepTime) + " is not a positive number", r.line);
      ok = false;
      continue;
    }
    const double consumed =
        data.contains("consumed_samples") && data["consumed_samples"].is_number() ? data["consumed_samples"].get<double>() : -1;
    steps->push_back({record["step"].get<int64_t>(), seconds, consumed, r.line});
  }
  if (bad > kMaxReported) {
    diags->Error("metrics.bad-record", std::to_string(bad - kMaxReported) + " more bad DLLogger records (" +
                                           std::to_string(bad) + " in all; the first " +
                                           std::to_string(kMaxReported) + " are shown)",
                 {file, 0, 0});
  }
  return ok;
}

double ModelFlopsPerSample(const nlohmann::json& architecture, int64_t seq_length) {
  const ModelArchitecture a = ModelArchitecture::FromJson(architecture);
  const double s = static_cast<double>(seq_length);
  const double layers = a.num_layers;
  const double h = a.hidden_size;
  const double ffn = a.ffn_hidden_size;
  const double heads = a.num_attention_heads;
  const double groups = a.num_query_groups;
  const double vocab = a.vocab_size;
  const double top_k = a.has_experts ? a.moe_top_k : 1;
  const double mlp_matrices = a.gated_mlp ? 3 : 2;
  if (layers == 0 || h == 0) return 0;
  return s * layers * h * h *
         (12 + 12 * groups / heads + 6 * mlp_matrices * top_k * ffn / h + 12 * s / h +
          6 * vocab / (layers * h));
}

bool ComputeMetrics(const std::vector<StepTiming>& steps, int64_t start, int64_t end,
                    const MetricsInput& input, Metrics* m, std::string* err) {
  double total = 0;
  m->steps = 0;
  m->first_step = std::numeric_limits<int64_t>::max();
  m->last_step = std::numeric_limits<int64_t>::min();
  for (const auto& step : steps) {
    if (step.step < start || step.step > end) continue;
    total += step.seconds;
    ++m->steps;
    m->first_step = std::min(m->first_step, step.step);
    m->last_step = std::max(m->last_step, step.step);
  }
  if (m->steps == 0) {
    *err = "no training step in the window " + std::to_string(start) + ".." +
           (end == std::numeric_limits<int64_t>::max() ? std::string() : std::to_string(end));
    if (!steps.empty()) {
      int64_t lo = steps.front().step, hi = steps.front().step;
      for (const auto& s : steps) {
        lo = std::min(lo, s.step);
        hi = std::max(hi, s.step);
      }
      *err += "; the log has steps " + std::to_string(lo) + ".." + std::to_string(hi);
    }
    return false;
  }
  m->step_seconds = total / static_cast<double>(m->steps);
  m->samples_per_second = static_cast<double>(input.global_batch) / m->step_seconds;
  m->tokens_per_second = m->samples_per_second * static_cast<double>(input.seq_length);
  m->tflops_per_gpu = input.flops_per_sample * static_cast<double>(input.global_batch) /
                      m->step_seconds / static_cast<double>(input.gpus) / 1e12;
  m->mfu = input.peak_tflops > 0 ? m->tflops_per_gpu / input.peak_tflops : 0;
  return true;
}

void CheckMetrics(const std::vector<StepTiming>& steps, const MetricsInput& input, const Metrics& m,
                  const std::string& file, Diagnostics* diags) {
  std::vector<const StepTiming*> window;
  for (const auto& step : steps) {
    if (step.step >= m.first_step && step.step <= m.last_step && step.consumed_samples >= 0) window.push_back(&step);
  }
  std::sort(window.begin(), window.end(), [](const StepTiming* a, const StepTiming* b) { return a->step < b->step; });
  for (size_t i = 1; i < window.size(); ++i) {
    const int64_t steps_between = window[i]->step - window[i - 1]->step;
    if (steps_between <= 0) continue;
    const double per_step = (window[i]->consumed_samples - window[i - 1]->consumed_samples) / steps_between;
    if (std::fabs(per_step - static_cast<double>(input.global_batch)) < 0.5) continue;
    char observed[32];
    std::snprintf(observed, sizeof observed, "%.0f", per_step);
    diags->Warning("metrics.batch",
                   "consumed_samples grows by " + std::string(observed) + " per step from step " +
                       std::to_string(window[i - 1]->step) + " to " + std::to_string(window[i]->step) +
                       ", but the spec's global batch is " + std::to_string(input.global_batch) +
                       ": throughput, TFLOPS and MFU use the spec's",
                   {file, window[i]->line, 1},
                   "pass the spec (and --set, --target, --stage) the run was built from");
    break;
  }
  if (m.mfu > 1.0) {
    char mfu[32];
    std::snprintf(mfu, sizeof mfu, "%.1f %%", 100 * m.mfu);
    diags->Warning("metrics.mfu",
                   "MFU " + std::string(mfu) + " exceeds 100 %: no GPU runs above its peak, so the run's GPUs, "
                   "batch or sequence length differ from the spec's (" + std::to_string(input.gpus) + " GPUs, global batch " +
                       std::to_string(input.global_batch) + ", sequence " + std::to_string(input.seq_length) + ")",
                   {file, 0, 0}, "pass the spec (and --set, --target, --stage) the run was built from");
  }
}

bool ParseStepWindow(const std::string& text, int64_t* start, int64_t* end, std::string* err) {
  const size_t colon = text.find(':');
  const std::string first = text.substr(0, colon);
  const std::string second = colon == std::string::npos ? first : text.substr(colon + 1);
  if (!ParseInt(first, start)) {
    *err = "--steps " + text + ": expected FIRST:LAST, FIRST: or STEP (non-negative integers)";
    return false;
  }
  if (second.empty()) {
    *end = std::numeric_limits<int64_t>::max();
  } else if (!ParseInt(second, end)) {
    *err = "--steps " + text + ": expected FIRST:LAST, FIRST: or STEP (non-negative integers)";
    return false;
  }
  if (*end < *start) {
    *err = "--steps " + text + ": the last step comes before the first";
    return false;
  }
  return true;
}

}  // namespace nemoc
