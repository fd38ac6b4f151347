//===- tools/onnx-partition/ChainInput.cpp - Planning a chain given as MODEL ===//
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
#include "Driver.h"
#include "ScheduleOutput.h"

#include "onnx-partition/Partition/ChainPlanTrace.h"
#include "onnx-partition/Partition/Partitioner.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/HumanUnits.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>

using namespace onnxp;
using namespace onnxp::tool;

namespace {
/// NaN and infinities are not JSON numbers: null.
nlohmann::json number(double V) { return std::isfinite(V) ? nlohmann::json(V) : nlohmann::json(nullptr); }

std::string chainPlanJson(const Chain &C, const Plan &P, const std::string &Input) {
  nlohmann::json J;
  J["format"] = "onnx-partition-chain-plan";
  J["version"] = 1;
  J["input"] = Input;
  J["chain"] = C.name;
  J["algorithm"] = P.algorithm;
  J["objective"] = objectiveName(P.objectiveKind);
  J["value_ms"] = number(P.objective);
  J["lower_bound_ms"] = number(P.lowerBound);
  J["solve_seconds"] = P.solveSeconds;
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
  J["stats"] = P.stats;
  J["notes"] = P.notes;
  J["schedule"] = nlohmann::json::parse(P.schedule, nullptr, /*allow_exceptions=*/false);
  if (J["schedule"].is_discarded()) J["schedule"] = nullptr;
  return J.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; // names may hold any byte
}
} // namespace

int onnxp::tool::runChainInput(PassContext &Ctx, const ToolOptions &O) {
  const Chain &C = *Ctx.chain;
  if (O.verbose) std::cerr << "onnx-partition: chain '" << C.name << "' of " << C.size() << " blocks\n";
  if (!O.memorySweep.empty()) {
    // The sweep plans at many limits and writes only its chart; a report or
    // a trace of "the" plan would be silently missing (issue 25).
    if (!O.report.empty() || !O.trace.empty())
      return reportError(makeUsageError("--memory-sweep on a chain writes only the chart; --report and "
                                        "--trace need a single plan (run without --memory-sweep)"));
    if (Error E = writeMemorySweep(C, Ctx.platform, O)) return reportError(E);
    return 0;
  }
  Expected<Plan> P = runChainPlanner(O.algo, C, Ctx.platform, Ctx.options.partition);
  if (!P) return reportError(P.takeError());
  // Every output is made before any is written: no partial set of files.
  std::string TraceText;
  std::optional<StagedSchedulePrice> Staged;
  if (!O.schedule.empty()) {
    ChromeTrace T;
    Expected<StagedSchedulePrice> S =
        scheduleChainPlan(C, Ctx.platform, *P, O, O.trace.empty() ? nullptr : &T);
    if (!S) return reportError(S.takeError());
    Staged = std::move(*S);
    if (!O.trace.empty()) TraceText = T.toJson();
  } else if (!O.trace.empty()) {
    Expected<ChromeTrace> T = traceChainPlan(C, Ctx.platform, *P);
    if (!T) return reportError(T.takeError());
    TraceText = T->toJson();
  }
  // Both files go to temporaries and are renamed only when both were written.
  OutputTransaction Files;
  if (!O.report.empty())
    if (Error E = Files.add(O.report, Staged ? withStagedSchedule(chainPlanJson(C, *P, O.input), *Staged)
                                             : chainPlanJson(C, *P, O.input)))
      return reportError(E);
  if (!O.trace.empty())
    if (Error E = Files.add(O.trace, TraceText)) return reportError(E);
  if (Error E = Files.commit()) return reportError(E);
  if (O.stats) {
    Expected<const PartitionerInfo *> Info = findPartitioner(O.algo);
    for (const auto &[Key, Value] : P->stats)
      std::cerr << std::setw(8) << formatNumber(Value) << " " << O.algo << " - "
                << (Info ? (*Info)->describeStatistic(Key) : Key) << "\n";
  }

  std::ostream &OS = std::cout;
  OS << "onnx-partition: " << O.input << ": chain '" << C.name << "' of " << C.size() << " blocks, forward "
     << formatNumber(C.totalForwardTime()) << " ms, backward " << formatNumber(C.totalBackwardTime())
     << " ms, weights " << humanBytes(C.totalWeightBytes()) << "\n";
  OS << "  algorithm " << P->algorithm << ": " << objectiveName(P->objectiveKind) << " "
     << formatNumber(P->objective) << " ms";
  if (!std::isnan(P->lowerBound)) OS << ", lower bound " << formatNumber(P->lowerBound);
  OS << ", solved in " << formatNumber(P->solveSeconds) << " s\n";
  std::map<int, int> Count;
  for (int D : P->device) ++Count[D];
  for (auto &[D, N] : Count) {
    OS << "  " << Ctx.platform.deviceName(D) << ": " << N << " blocks";
    if (D < (int)P->usage.size())
      OS << ", load " << formatNumber(P->usage[D].load) << " ms, peak memory "
         << humanBytes(P->usage[D].memory);
    OS << "\n";
  }
  for (const std::string &N : P->notes) OS << "  note: " << N << "\n";
  if (Staged) OS << describeStagedSchedule(*Staged);
  if (!O.report.empty()) OS << "  wrote " << O.report << "\n";
  if (!O.trace.empty()) OS << "  wrote " << O.trace << "\n";
  return 0;
}
