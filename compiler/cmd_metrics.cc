// nemoc metrics: step time, throughput, TFLOPS per GPU and MFU from a
// DLLogger log, with the model, batch, GPUs and precision taken from the spec.
#include "commands.h"

#include <filesystem>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "cost.h"
#include "disk_interface.h"
#include "file_reader.h"
#include "metrics.h"

namespace nemoc {

const char kMetricsHelp[] =
    "Read a NeMo DLLogger log (dllogger.json of rank 0) and report the average step time\n"
    "over a window of steps, samples and tokens per second, achieved TFLOPS per GPU and\n"
    "model FLOPs utilization (MFU). Model FLOPs come from the spec's architecture with the\n"
    "Megatron formula; global batch, sequence length, GPU count, precision and GPU model\n"
    "from the spec and its target; peak TFLOPS (dense) from libsonnet/accelerators.json.\n"
    "The step window is inclusive; the default 10:30 skips warm-up steps as gpu-recipes'\n"
    "training_metrics tool does. In a training chain, --stage pretrain measures the log of\n"
    "spec.stages.pretrain (<results>/pretrain/dllogger) against that stage's sizes.\n"
    "Beside the measured MFU it shows the prior of the build's cost estimate (SUMMARY.md\n"
    "'Cost (estimate)'); --pin records the measured MFU as that prior in the spec's\n"
    ".nemoc/<spec>.priors.json, so later estimates use what this cluster achieved.\n"
    "Example: nemoc metrics dllogger.json --spec examples/llama31-405b-gke-a4.yaml --steps 10:14";

namespace {

std::string Format(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// A million steps of DLLogger records are ~300 MB.
constexpr size_t kMaxLogBytes = size_t{512} << 20;

}  // namespace

int RunMetrics(const MetricsFlags& flags) {
  Diagnostics diags;
  auto fail = [&](const SourceTexts& sources) {
    if (flags.output.json()) return std::max<int>(PrintJsonReport("metrics", diags, nullptr), kExitInvalid);
    PrintDiagnostics(diags, sources);
    return std::max<int>(ExitCodeFor(diags), kExitInvalid);
  };
  int64_t first = 0, last = 0;
  std::string err;
  if (!ParseStepWindow(flags.steps, &first, &last, &err)) {
    diags.Error("usage.steps", err);
    return fail({});
  }
  // A DLLogger log is a regular file of bounded size (field review E19):
  // /dev/zero was read for ever into memory, a FIFO blocked the open. The
  // type is checked before opening (following a symlink), the size while
  // reading (the file may grow after the check).
  std::error_code ec;
  const auto status = std::filesystem::status(flags.log, ec);
  if (ec || !std::filesystem::is_regular_file(status)) {
    diags.Error("metrics.read",
                ec ? "cannot read " + flags.log + ": " + ec.message()
                   : flags.log + " is not a regular file (a DLLogger log is one: dllogger/rank-0/dllogger.json)",
                {flags.log, 0, 0});
    return fail({});
  }
  std::ifstream in(flags.log, std::ios::binary);
  std::string log_text;
  char chunk[1 << 16];
  while (in && log_text.size() <= kMaxLogBytes) {
    in.read(chunk, sizeof chunk);
    log_text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad() || (!in.is_open())) {
    diags.Error("metrics.read", "cannot read " + flags.log, {flags.log, 0, 0});
    return fail({});
  }
  if (log_text.size() > kMaxLogBytes) {
    diags.Error("metrics.too-large",
                flags.log + " is larger than " + std::to_string(kMaxLogBytes >> 20) + " MiB",
                {flags.log, 0, 0}, "pass the DLLogger log of one run (rank 0), or cut it to the steps you measure");
    return fail({});
  }
  std::vector<StepTiming> steps;
  if (!ParseDllogger(log_text, flags.log, &steps, &diags)) return fail({{flags.log, log_text}});

  CompileFlags compile;
  compile.specs = {flags.spec};
  compile.sets = flags.sets;
  compile.jpaths = flags.jpaths;
  if (!flags.target.empty()) compile.targets = {flags.target};
  std::unique_ptr<Compiler> compiler;
  CompiledSpec spec;
  if (!MakeCompiler(compile, &compiler, &diags) || !compiler->CompileFile(flags.spec, &spec, &diags)) {
    return fail(compiler ? compiler->sources() : SourceTexts{});
  }
  if (spec.targets.size() != 1) {
    std::string names;
    for (const auto& t : spec.targets) names += (names.empty() ? "" : ", ") + t.name;
    diags.Error("usage.target", flags.spec + " has " + std::to_string(spec.targets.size()) +
                                    " targets; choose one with --target (" + names + ")");
    return fail({});
  }
  const nlohmann::json& plan = spec.targets[0].plan;
  // Each stage of a training chain has its own sizes (plan.cc): the log's.
  if (!plan.contains(flags.stage) || !plan.contains("accelerator")) {
    diags.Error("metrics.no-train", flags.spec + ": no spec.stages." + flags.stage + " (or no GPU model) in target " +
                                        spec.targets[0].name);
    return fail({});
  }
  const auto& train = plan[flags.stage];
  const std::string precision = train["precision"].get<std::string>();
  DataDir data;
  AcceleratorTable accelerators;
  if (!FindDataDir(&data, &err) || !AcceleratorTable::Load(data.accelerators(), &accelerators, &err)) {
    diags.Error("internal.accelerators", err);
    return fail({});
  }
  const std::string accelerator = plan["accelerator"].get<std::string>();
  const nlohmann::json* gpu = accelerators.Find(accelerator);
  if (gpu == nullptr || !(*gpu).contains("peakTflops") || !(*gpu)["peakTflops"].contains(precision)) {
    diags.Error("metrics.no-peak", "no " + precision + " peak TFLOPS for " + accelerator +
                                       " in libsonnet/accelerators.json");
    return fail({});
  }
  MetricsInput input;
  input.flops_per_sample = train["modelFlopsPerSample"].get<double>();
  input.global_batch = train["batch"]["global"].get<int64_t>();
  input.seq_length = train["seqLength"].get<int64_t>();
  input.gpus = train["gpus"].get<int64_t>();
  input.peak_tflops = (*gpu)["peakTflops"][precision].get<double>();
  Metrics m;
  if (!ComputeMetrics(steps, first, last, input, &m, &err)) {
    diags.Error("metrics.window", flags.log + ": " + err, {flags.log, 0, 0},
                "choose the window with --steps FIRST:LAST");
    return fail({});
  }
  CheckMetrics(steps, input, m, flags.log, &diags);
  // Issue #46 item 3: the prior the cost estimate used, beside what was
  // measured; --pin makes the measurement the spec's prior (cost.h).
  const nlohmann::json cost = train.value("cost", nlohmann::json::object());
  const bool has_prior = cost.contains("mfu");
  std::string pinned_to;
  if (flags.pin) {
    const bool plausible = m.mfu > 0 && m.mfu <= 1;
    if (!plausible || !cost.contains("priorKey")) {
      diags.Error("metrics.pin", plausible ? "this target has no cost estimate to pin a prior for"
                                           : "a measured MFU of " + Format("%.1f %%", 100 * m.mfu) + " is not pinned",
                  {flags.log, 0, 0});
      return fail({});
    }
    const std::string path = PinPath(spec.path);
    nlohmann::json pins = nlohmann::json::object();
    std::string read_err;
    RealFileReader reader;
    const std::string text = ReadPins(&reader, spec.path, &read_err);
    if (!read_err.empty() || (!text.empty() && !ParsePins(text, &pins, &read_err))) {
      diags.Error("metrics.pin", path + ": " + read_err, {path, 0, 0}, "fix or delete the file");
      return fail({});
    }
    pins[cost["priorKey"].get<std::string>()] = {
        {"mfu", std::round(m.mfu * 1000) / 1000},
        {"source", "measured by nemoc metrics: " + std::filesystem::path(flags.log).filename().string() + ", steps " +
                       std::to_string(m.first_step) + ".." + std::to_string(m.last_step) + ", " +
                       std::to_string(input.gpus) + " GPUs"}};
    std::string write_err;
    RealDisk disk;
    if (!WritePins(disk, path, PinsText(pins), &write_err)) {
      diags.Error("metrics.pin", "cannot write " + path + ": " + write_err, {path, 0, 0});
      return fail({});
    }
    pinned_to = path;
  }
  if (flags.output.json()) {
    nlohmann::json target = {
        {"name", spec.targets[0].name},
        {"steps", {{"first", m.first_step}, {"last", m.last_step}, {"count", m.steps}}},
        {"stepSeconds", m.step_seconds},
        {"samplesPerSecond", m.samples_per_second},
        {"tokensPerSecond", m.tokens_per_second},
        {"modelFlopsPerSample", input.flops_per_sample},
        {"tflopsPerGpu", m.tflops_per_gpu},
        {"peakTflops", input.peak_tflops},
        {"precision", precision},
        {"accelerator", accelerator},
        {"gpus", input.gpus},
        {"mfu", m.mfu}};
    if (has_prior) {
      target["mfuPrior"] = cost["mfu"];
      target["mfuPriorSource"] = cost["mfuSource"];
      target["estimatedStepSeconds"] = cost["stepSeconds"];
    }
    if (!pinned_to.empty()) target["pinned"] = pinned_to;
    nlohmann::json specs = nlohmann::json::array();
    specs.push_back({{"path", spec.path}, {"project", spec.project}, {"targets", nlohmann::json::array({target})}});
    return PrintJsonReport("metrics", diags, specs);
  }
  std::string out = spec.project + " / " + spec.targets[0].name + ": steps " +
                    std::to_string(m.first_step) + ".." + std::to_string(m.last_step) + " (" +
                    std::to_string(m.steps) + " of " + std::to_string(steps.size()) +
                    " step records), " + std::to_string(input.gpus) + " × " +
                    plan.value("gpuModel", accelerator) + ", " + precision + "\n";
  auto row = [&](const std::string& key, const std::string& value) {
    std::string line = "  " + key;
    while (line.size() < 24) line += ' ';
    out += line + value + "\n";
  };
  row("average step time", Format("%.3f s", m.step_seconds));
  row("throughput", Format("%.2f samples/s, ", m.samples_per_second) +
                        Format("%.0f tokens/s", m.tokens_per_second));
  row("model FLOPs", Format("%.4e per sequence", input.flops_per_sample) + " (Megatron formula, seq " +
                         std::to_string(input.seq_length) + ", global batch " +
                         std::to_string(input.global_batch) + ")");
  row("TFLOPS per GPU", Format("%.1f", m.tflops_per_gpu));
  row("MFU", Format("%.2f %%", 100 * m.mfu) + Format(" of %.0f TFLOPS", input.peak_tflops) + " (" +
                 precision + " dense peak)");
  if (has_prior) {
    row("MFU prior", Format("%.1f %%", 100 * cost["mfu"].get<double>()) + ", estimated step " +
                         HumanDuration(cost["stepSeconds"].get<double>()) + " (" +
                         (cost.value("pinned", false) ? "pinned: " : "") + cost["mfuSource"].get<std::string>() + ")");
  }
  if (!pinned_to.empty()) row("pinned", "measured MFU as the prior of " + cost["priorKey"].get<std::string>() + " in " + pinned_to);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!diags.empty()) {
    SourceTexts sources = compiler->sources();
    sources[flags.log] = log_text;
    PrintDiagnostics(diags, sources);
  }
  return kExitOk;
}

}  // namespace nemoc
