// What a target costs, before it is merged (issue #46 item 3): per stage the
// GPUs it holds; per training stage the expected step and wall time and the
// GPU-hours, from the model FLOPs of a step (metrics.h ModelFlopsPerSample),
// the accelerator's dense peak and an MFU prior -- measured throughput of the
// same model family on the same GPU and precision, published by NVIDIA or
// Meta (libsonnet/accelerators.json mfuPriors, each row with its source).
//
// The prior a spec used is pinned beside it, in .nemoc/<spec>.priors.json,
// so a nemoc upgrade with a new table does not rewrite every SUMMARY.md: a
// pinned row wins over the table; build adds the rows it needed and did not
// find; deleting the file (or a row) takes the table's again.
#ifndef NEMOC_COST_H_
#define NEMOC_COST_H_

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace nemoc {

class Disk;          // disk_interface.h
class FileReader;    // file_reader.h
class ModelCatalog;  // normalizer.h

/// An MFU prior as chosen for one training stage.
struct MfuPrior {
  bool found = false;
  double mfu = 0;      // a fraction of the precision's dense peak
  std::string source;  // what it was measured on, and where that is published
  bool pinned = false;  // from the spec's .nemoc/ pin file
};

/// The pin key of a model on a GPU at a precision: "<preset or custom> on
/// <accelerator>, <precision>".
std::string PriorKey(const nlohmann::json& model, const std::string& accelerator, const std::string& precision);

/// Chooses the prior from the accelerator's mfuPriors rows (`gpu` is its
/// accelerators.json row): the rows of the model's family at `precision`,
/// the one whose model is nearest in size (model FLOPs per token without
/// attention); no row of the family: none. MFU of a row: its tokens/s/GPU
/// times the FLOPs per token of its model (`catalog`) at its sequence
/// length, over the peak; or tflopsPerGpu over the peak.
MfuPrior TablePrior(const nlohmann::json& gpu, const nlohmann::json& model, const std::string& precision,
                    const ModelCatalog& catalog);

/// The MFU of one table row, as TablePrior computes it (0 when the row's
/// model or the peak is unknown). For tests comparing the table with its sources.
double RowMfu(const nlohmann::json& row, const nlohmann::json& gpu, const std::string& precision,
              const ModelCatalog& catalog);

/// The pin file of a spec: <spec dir>/.nemoc/<spec file name>.priors.json.
std::string PinPath(const std::string& spec_path);

/// The pin file beside `spec_path` as read through `reader` ("" when there
/// is none); `err` says why one that exists cannot be read.
std::string ReadPins(FileReader* reader, const std::string& spec_path, std::string* err);

/// Reads pins (the file's "mfu" object: key -> {mfu, source}); an absent
/// file is no pins; false with `err` when it exists and is not valid.
bool ParsePins(const std::string& text, nlohmann::json* pins, std::string* err);

/// The pin file's text holding `pins` (deterministic).
std::string PinsText(const nlohmann::json& pins);

/// Writes the pin file `path` (its .nemoc/ directory made if missing) whole:
/// a temporary file of this process renamed over it, so a reader sees the
/// old file or the new one. `build` and `metrics --pin` write through it.
bool WritePins(Disk& disk, const std::string& path, const std::string& text, std::string* err);

/// The cost of one training stage of a plan (plan.cc's stage object: gpus,
/// maxSteps, batch.global, modelFlopsPerSample, mode) as plan JSON:
///   {"gpus", "flopsPerStep", "peakTflops", "precision", "mfu", "mfuSource",
///    "pinned", "stepSeconds", "wallSeconds", "gpuHours"}
/// or {"gpus", "unestimated": why} without a prior or a peak.
nlohmann::json TrainingCost(const nlohmann::json& stage_plan, double peak_tflops, const MfuPrior& prior,
                            const std::string& why_none);

/// GPUs each stage directory's workloads hold at once, from the objects
/// (`files`: relative path -> object): per pod spec, its containers' requests
/// of `gpu_resource` times the replicas and parallelism above it. Training
/// directories are given (`training`: directory -> GPUs, the plan's sizes).
nlohmann::json GpusByStage(const std::map<std::string, nlohmann::json>& files, const std::string& gpu_resource,
                           const std::map<std::string, int64_t>& training);

/// "~117 s per step, 29 min for the run on 224 GPUs: **109 GPU-hours**", or
/// why there is no estimate; and what it rests on (FLOPs, peak, the prior
/// and its source; "" without an estimate). SUMMARY.md's and the plan's rows.
std::string DescribeCost(const nlohmann::json& cost);
std::string DescribeCostBasis(const nlohmann::json& cost);

/// "30-train 224 · 70-serve 2" (stages holding no GPU left out; "none").
std::string DescribeGpusByStage(const nlohmann::json& by_stage);

/// SUMMARY.md's row names for the cost of training stage `key`.
std::string CostRowName(const std::string& key);
std::string CostBasisRowName(const std::string& key);

/// "110 → 220 GPU-hours (+100 %)" from two DescribeCost texts; "" when
/// either has no GPU-hours or they are equal.
std::string CostDelta(const std::string& before, const std::string& after);

/// A duration for people: "42 s", "29 min", "3.4 h", "5.2 days".
std::string HumanDuration(double seconds);

}  // namespace nemoc

#endif  // NEMOC_COST_H_
