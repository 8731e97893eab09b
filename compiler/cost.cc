#include "cost.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <unistd.h>

#include "disk_interface.h"
#include "file_reader.h"
#include "metrics.h"
#include "normalizer.h"

namespace nemoc {

namespace {

std::string Format(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// Three significant digits, without exponent for the sizes a cost has.
double Significant(double v, int digits = 3) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

std::string Number(double v) {
  v = Significant(v);
  if (std::fabs(v) >= 100) return Format("%.0f", v);
  if (std::fabs(v) >= 10) return Format("%.1f", v);
  return Format("%.2f", v);
}

// Model size for choosing the nearest row: FLOPs per token without the
// attention-score term (sequence length 1).
double SizeOf(const nlohmann::json& architecture) { return ModelFlopsPerSample(architecture, 1); }

const nlohmann::json* ArchitectureOf(const std::string& preset, const ModelCatalog& catalog) {
  const nlohmann::json* entry = catalog.Find(preset);
  if (entry == nullptr || !entry->contains("architecture")) return nullptr;
  return &(*entry)["architecture"];
}

double PeakOf(const nlohmann::json& gpu, const std::string& precision) {
  if (!gpu.contains("peakTflops") || !gpu["peakTflops"].contains(precision)) return 0;
  return gpu["peakTflops"][precision].get<double>();
}

}  // namespace

std::string PriorKey(const nlohmann::json& model, const std::string& accelerator, const std::string& precision) {
  const std::string name = model.contains("preset") && model["preset"].is_string()
                               ? model["preset"].get<std::string>()
                               : std::string("custom");
  return name + " on " + accelerator + ", " + precision;
}

double RowMfu(const nlohmann::json& row, const nlohmann::json& gpu, const std::string& precision,
              const ModelCatalog& catalog) {
  const double peak = PeakOf(gpu, precision);
  if (peak <= 0) return 0;
  if (row.contains("tflopsPerGpu")) return row["tflopsPerGpu"].get<double>() / peak;
  const nlohmann::json* arch = ArchitectureOf(row.value("model", ""), catalog);
  if (arch == nullptr || !row.contains("tokensPerSecondPerGpu") || !row.contains("seqLength")) return 0;
  const int64_t seq = row["seqLength"].get<int64_t>();
  const double per_token = ModelFlopsPerSample(*arch, seq) / static_cast<double>(seq);
  return row["tokensPerSecondPerGpu"].get<double>() * per_token / 1e12 / peak;
}

MfuPrior TablePrior(const nlohmann::json& gpu, const nlohmann::json& model, const std::string& precision,
                    const ModelCatalog& catalog) {
  MfuPrior prior;
  if (!gpu.contains("mfuPriors") || !model.contains("architecture")) return prior;
  const std::string family = model.value("family", "");
  const double size = SizeOf(model["architecture"]);
  if (family.empty() || size <= 0) return prior;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& row : gpu["mfuPriors"]) {
    if (row.value("family", "") != family || row.value("precision", "") != precision) continue;
    const nlohmann::json* arch = ArchitectureOf(row.value("model", ""), catalog);
    if (arch == nullptr) continue;
    const double distance = std::fabs(std::log(SizeOf(*arch) / size));
    const double mfu = RowMfu(row, gpu, precision, catalog);
    if (mfu <= 0 || distance >= best) continue;
    best = distance;
    prior.found = true;
    prior.mfu = std::round(mfu * 1000) / 1000;  // what a pin records: three decimals
    prior.source = row.value("source", "");
  }
  return prior;
}

std::string PinPath(const std::string& spec_path) {
  const std::filesystem::path spec(spec_path);
  return (spec.parent_path() / ".nemoc" / (spec.filename().string() + ".priors.json")).generic_string();
}

std::string ReadPins(FileReader* reader, const std::string& spec_path, std::string* err) {
  const std::string path = PinPath(spec_path);
  std::string text;
  FileReader::Failure failure;
  switch (reader->ReadFile(path, kMaxTableBytes, &text, &failure)) {
    case FileReader::Status::kOkay:
      return text;
    case FileReader::Status::kNotFound:
      return "";
    default:
      *err = failure.action + " " + path + ": " + failure.reason;
      return "";
  }
}

bool ParsePins(const std::string& text, nlohmann::json* pins, std::string* err) {
  *pins = nlohmann::json::object();
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    *err = "not a JSON object";
    return false;
  }
  if (!parsed.contains("mfu")) return true;
  if (!parsed["mfu"].is_object()) {
    *err = "\"mfu\" is not an object";
    return false;
  }
  for (const auto& [key, row] : parsed["mfu"].items()) {
    if (!row.is_object() || !row.contains("mfu") || !row["mfu"].is_number() || row["mfu"].get<double>() <= 0 ||
        row["mfu"].get<double>() > 1 || (row.contains("source") && !row["source"].is_string())) {
      *err = "row \"" + key + "\" needs \"mfu\" (a fraction of the peak, above 0 and at most 1) and a \"source\" text";
      return false;
    }
    (*pins)[key] = {{"mfu", row["mfu"]}, {"source", row.value("source", "")}};
  }
  return true;
}

std::string PinsText(const nlohmann::json& pins) {
  nlohmann::json file = {
      {"_comment",
       "MFU priors nemoc's cost estimate used for this spec (SUMMARY.md 'Cost (estimate)'), pinned so that a nemoc "
       "upgrade does not change them. Edit a row -- for example to the MFU `nemoc metrics` measured -- or delete it "
       "(or this file) to take nemoc's current table; build adds the rows it needs."},
      {"mfu", pins}};
  return file.dump(2) + "\n";
}

bool WritePins(Disk& disk, const std::string& path, const std::string& text, std::string* err) {
  const std::string temp = path + "." + std::to_string(getpid()) + ".nemoc-tmp";
  return disk.MakeDirs(std::filesystem::path(path).parent_path().string(), err) && disk.WriteFile(temp, text, err) &&
         disk.Rename(temp, path, err);
}

nlohmann::json TrainingCost(const nlohmann::json& stage_plan, double peak_tflops, const MfuPrior& prior,
                            const std::string& why_none) {
  const int64_t gpus = stage_plan["gpus"].get<int64_t>();
  nlohmann::json cost = {{"gpus", gpus}};
  if (!prior.found || peak_tflops <= 0 || gpus <= 0) {
    cost["unestimated"] = why_none;
    return cost;
  }
  // LoRA: the frozen base weights get no weight gradients, so a step is the
  // forward (2 FLOPs per parameter and token) and the activation gradients
  // (2) of the full model's 6.
  const bool lora = stage_plan.value("mode", "") == "lora";
  const double flops = stage_plan["modelFlopsPerSample"].get<double>() *
                       static_cast<double>(stage_plan["batch"]["global"].get<int64_t>()) * (lora ? 2.0 / 3.0 : 1.0);
  const double step = flops / (static_cast<double>(gpus) * peak_tflops * 1e12 * prior.mfu);
  const double wall = step * static_cast<double>(stage_plan["maxSteps"].get<int64_t>());
  cost["flopsPerStep"] = Significant(flops, 4);
  cost["precision"] = stage_plan["precision"];
  cost["peakTflops"] = peak_tflops;
  cost["mfu"] = prior.mfu;
  cost["mfuSource"] = prior.source;
  cost["pinned"] = prior.pinned;
  if (lora) cost["flopsNote"] = "LoRA: 2/3 of the full model's FLOPs (no weight gradients for the frozen weights)";
  cost["stepSeconds"] = Significant(step);
  cost["wallSeconds"] = Significant(wall);
  cost["gpuHours"] = Significant(wall * static_cast<double>(gpus) / 3600);
  return cost;
}

namespace {

int64_t GpusOfContainers(const nlohmann::json& containers, const std::string& resource) {
  int64_t sum = 0;
  for (const auto& c : containers) {
    if (!c.is_object() || !c.contains("resources")) continue;
    for (const char* side : {"limits", "requests"}) {
      const auto& r = c["resources"];
      if (!r.contains(side) || !r[side].contains(resource)) continue;
      const auto& v = r[side][resource];
      if (v.is_number_integer()) sum += v.get<int64_t>();
      else if (v.is_string()) sum += std::atoll(v.get<std::string>().c_str());
      break;  // limits, else requests: never both
    }
  }
  return sum;
}

int64_t WalkGpus(const nlohmann::json& node, int64_t multiplier, const std::string& resource) {
  if (node.is_array()) {
    int64_t sum = 0;
    for (const auto& item : node) sum += WalkGpus(item, multiplier, resource);
    return sum;
  }
  if (!node.is_object()) return 0;
  int64_t m = multiplier;
  for (const char* key : {"replicas", "parallelism"}) {
    if (node.contains(key) && node[key].is_number_integer()) m *= node[key].get<int64_t>();
  }
  int64_t sum = 0;
  if (node.contains("containers") && node["containers"].is_array()) sum += m * GpusOfContainers(node["containers"], resource);
  for (const auto& [key, value] : node.items()) {
    if (key == "containers" || key == "initContainers" || key == "status") continue;
    sum += WalkGpus(value, m, resource);
  }
  return sum;
}

}  // namespace

nlohmann::json GpusByStage(const std::map<std::string, nlohmann::json>& files, const std::string& gpu_resource,
                           const std::map<std::string, int64_t>& training) {
  nlohmann::json by = nlohmann::json::object();
  for (const auto& [path, object] : files) {
    const size_t slash = path.find('/');
    if (slash == std::string::npos) continue;
    const std::string dir = path.substr(0, slash);
    if (dir == "gitops") continue;
    if (!by.contains(dir)) by[dir] = 0;
    if (training.count(dir) != 0) continue;
    by[dir] = by[dir].get<int64_t>() + WalkGpus(object.value("spec", nlohmann::json()), 1, gpu_resource);
  }
  for (const auto& [dir, gpus] : training) by[dir] = gpus;
  return by;
}

std::string DescribeGpusByStage(const nlohmann::json& by_stage) {
  std::string text;
  for (const auto& [dir, gpus] : by_stage.items()) {
    if (gpus.get<int64_t>() == 0) continue;
    text += (text.empty() ? "" : " · ") + dir + " " + std::to_string(gpus.get<int64_t>());
  }
  return text.empty() ? "none" : text;
}

std::string CostRowName(const std::string& key) {
  return key == "pretrain" ? "Pretraining cost (estimate)" : "Cost (estimate)";
}

std::string CostBasisRowName(const std::string& key) {
  return key == "pretrain" ? "Pretraining cost basis" : "Cost basis";
}

namespace {

// The GPU-hours of a DescribeCost text ("... **110 GPU-hours**"), -1 without.
double GpuHoursIn(const std::string& text) {
  const size_t end = text.find(" GPU-hours**");
  if (end == std::string::npos) return -1;
  const size_t start = text.rfind("**", end);
  if (start == std::string::npos) return -1;
  return std::atof(text.substr(start + 2, end - start - 2).c_str());
}

}  // namespace

std::string CostDelta(const std::string& before, const std::string& after) {
  const double a = GpuHoursIn(before), b = GpuHoursIn(after);
  if (a <= 0 || b < 0 || a == b) return "";
  const double percent = 100 * (b - a) / a;
  return Number(a) + " → " + Number(b) + " GPU-hours (" + (percent >= 0 ? "+" : "−") +
         Format("%.0f", std::fabs(percent)) + " %)";
}

std::string HumanDuration(double seconds) {
  if (seconds < 120) return Number(seconds) + " s";
  if (seconds < 2 * 3600) return Number(seconds / 60) + " min";
  if (seconds < 2 * 86400) return Number(seconds / 3600) + " h";
  return Number(seconds / 86400) + " days";
}

std::string DescribeCost(const nlohmann::json& cost) {
  const std::string gpus = std::to_string(cost["gpus"].get<int64_t>()) + " GPUs";
  if (cost.contains("unestimated")) return gpus + "; step time not estimated: " + cost["unestimated"].get<std::string>();
  return "~" + HumanDuration(cost["stepSeconds"].get<double>()) + " per step, " +
         HumanDuration(cost["wallSeconds"].get<double>()) + " for the run on " + gpus + ": **" +
         Number(cost["gpuHours"].get<double>()) + " GPU-hours**";
}

std::string DescribeCostBasis(const nlohmann::json& cost) {
  if (cost.contains("unestimated")) return "";
  return Format("%.3g", cost["flopsPerStep"].get<double>()) + " model FLOPs per step" +
         (cost.contains("flopsNote") ? " (" + cost["flopsNote"].get<std::string>() + ")" : std::string()) +
         " at MFU " + Format("%.1f", 100 * cost["mfu"].get<double>()) + " % of the " +
         Format("%.0f", cost["peakTflops"].get<double>()) + " TFLOPS " + cost["precision"].get<std::string>() +
         " dense peak; MFU prior: " + cost["mfuSource"].get<std::string>();
}

}  // namespace nemoc
