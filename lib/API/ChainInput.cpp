//===- API/ChainInput.cpp - Planning a chain given as MODEL -------------===//
//
// `onnx-partition vgg16.txt --algo pipeline-ilp` (a PipeDream profile, a
// chain JSON or a Piper input): there is no cost graph and no model, so the
// pass pipeline is skipped and the chain planner runs on the chain directly
// (runChainPlanner), priced by its simulator. Outputs are the summary, the
// --report JSON (the block-indexed plan) and the --trace Chrome trace; -o and
// --emit-stages, which write ONNX models, are usage errors (checked by the
// caller before the run).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/Outputs.h"
#include "onnx-partition/API/ScheduleOutput.h"

#include "onnx-partition/IR/ChainScheduleJson.h"
#include "onnx-partition/Partition/ChainPlanTrace.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/HumanUnits.h"
#include "onnx-partition/Support/OutputTransaction.h"
#include "onnx-partition/Support/SummaryText.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>

using namespace onnxp;

namespace {
/// NaN and infinities are not JSON numbers: null.
nlohmann::json number(double V) { return std::isfinite(V) ? nlohmann::json(V) : nlohmann::json(nullptr); }

std::string chainPlanJson(const Chain &C, const Plan &P, const std::string &Input, bool Timings) {
  nlohmann::json J;
  J["format"] = "onnx-partition-chain-plan";
  J["version"] = 1;
  J["input"] = Input;
  J["chain"] = C.name;
  J["algorithm"] = P.algorithm;
  J["objective"] = objectiveName(P.objectiveKind);
  J["value_ms"] = number(P.objective);
  J["lower_bound_ms"] = number(P.lowerBound);
  // Issue 20: wall-clock numbers only under --timings, as the graph
  // planners' reports (PlanIO.cpp), so two identical runs write the same bytes.
  if (Timings) J["timings"]["solve_seconds"] = P.solveSeconds;
  nlohmann::json Blocks = nlohmann::json::array();
  for (size_t B = 0; B < C.size(); ++B)
    Blocks.push_back({{"name", C.blocks[B].name},
                      {"device", P.device[B]},
                      {"stage", B < P.stage.size() ? P.stage[B] : P.device[B]}});
  J["blocks"] = Blocks;
  nlohmann::json Devices = nlohmann::json::array();
  for (const DeviceUsage &U : P.usage)
    Devices.push_back(
        {{"load_ms", number(U.load)}, {"compute_ms", number(U.compute)}, {"memory_bytes", number(U.memory)}});
  J["devices"] = Devices;
  J["stats"] = nlohmann::json::object();
  for (const auto &[Key, Value] : P.stats) {
    bool Clock = Key.rfind("time_", 0) == 0 || Key.find("seconds") != std::string::npos;
    if (!Clock) J["stats"][Key] = Value;
    else if (Timings) J["timings"][Key] = Value;
  }
  J["notes"] = P.notes;
  J["schedule"] = chainScheduleToJson(P.schedule); // null when the plan has none
  return J.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; // names may hold any byte
}
} // namespace

Expected<RunOutputs> onnxp::runChainInput(const PassContext &Ctx, const OutputOptions &O,
                                          const OutputRequest &R) {
  const Chain &C = *Ctx.chain;
  Expected<Plan> P = runChainPlanner(O.algo, C, Ctx.platform, Ctx.options.partition);
  if (!P) return P.takeError();
  RunOutputs Out;
  const bool Trace = R.trace || !O.trace.empty();
  if (O.schedule != PipelineScheduleKind::None) {
    ChromeTrace T;
    Expected<StagedSchedulePrice> S = scheduleChainPlan(C, Ctx.platform, *P, O, Trace ? &T : nullptr);
    if (!S) return S.takeError();
    Out.staged = std::move(*S);
    if (Trace) Out.trace = T.toJson();
  } else if (Trace) {
    Expected<ChromeTrace> T = traceChainPlan(C, Ctx.platform, *P);
    if (!T) return T.takeError();
    Out.trace = T->toJson();
  }
  if (R.report)
    Out.report = Out.staged ? withStagedSchedule(chainPlanJson(C, *P, O.input, O.timings), *Out.staged)
                            : chainPlanJson(C, *P, O.input, O.timings);
  if (O.stats) {
    std::ostringstream SS;
    Expected<const PartitionerInfo *> Info = findPartitioner(O.algo);
    for (const auto &[Key, Value] : P->stats)
      SS << std::setw(8) << formatNumber(Value) << " " << O.algo << " - "
         << (Info ? (*Info)->describeStatistic(Key) : Key) << "\n";
    Out.stats = SS.str();
  }

  std::ostringstream OS;
  OS << "onnx-partition: " << O.input << ": chain '" << C.name << "' of " << C.size() << " blocks, forward "
     << formatNumber(C.totalForwardTime()) << " ms, backward " << formatNumber(C.totalBackwardTime())
     << " ms, weights " << humanBytes(C.totalWeightBytes()) << "\n";
  OS << "  algorithm " << P->algorithm << ": " << objectiveName(P->objectiveKind) << " "
     << formatNumber(P->objective) << " ms";
  if (!std::isnan(P->lowerBound)) OS << ", lower bound " << formatNumber(P->lowerBound);
  OS << ", solved in " << humanSeconds(P->solveSeconds) << "\n";
  std::map<int, int> Count;
  for (int D : P->device) ++Count[D];
  for (auto &[D, N] : Count) {
    OS << "  " << Ctx.platform.deviceName(D) << ": " << N << " blocks";
    if (D < (int)P->usage.size())
      OS << ", load " << formatNumber(P->usage[D].load) << " ms, peak memory "
         << humanBytes(P->usage[D].memory);
    OS << "\n";
  }
  for (const std::string &N : P->notes) OS << noteLine(N);
  if (Out.staged) OS << describeStagedSchedule(*Out.staged);
  if (!O.report.empty()) OS << "  wrote " << O.report << "\n";
  if (!O.trace.empty()) OS << "  wrote " << O.trace << "\n";
  Out.summary = OS.str();
  Out.chainPlan = std::move(*P);
  return Out;
}
