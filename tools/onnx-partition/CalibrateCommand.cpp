//===- tools/onnx-partition/CalibrateCommand.cpp - onnx-partition calibrate ===//
//
// Issue 23, item 3: fit the measured device kind's roofline parameters (peak
// FLOP/s, memory bandwidth, per-kernel overhead) and, per op kind, the
// achieved fractions of those peaks and the kind's own overhead to an ONNX
// Runtime profile of the model (Cost/Calibration.h: least squares on log
// time ratios), write them as a platform file --platform reads, and print
// Spearman's rho and the mean absolute percentage error of the per-node
// times before and after.
// The model is priced as written (--ort-optimizations none): test/ort/
// profile.js runs ORT with graph optimizations disabled, one kernel per node.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"
#include "OrtScripts.h"

#include "onnx-partition/Support/ChildProcess.h"

#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/Calibration.h"
#include "onnx-partition/Cost/RankCorrelation.h"
#include "onnx-partition/Cost/Roofline.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Support/OutputTransaction.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

namespace {
/// The JSON a calibrated platform starts from: the --platform file's own
/// object, or {"base": preset}.
Expected<nlohmann::json> basePlatformJson(const std::string &Platform) {
  std::string Name = Platform.empty() ? std::string("default") : Platform;
  for (const std::string &P : platformPresetNames())
    if (P == Name) return nlohmann::json{{"base", Name}};
  Expected<std::string> Text = readFile(Name, kMaxJsonInputBytes, "a platform file");
  if (!Text) return Text.takeError();
  try {
    nlohmann::json J = nlohmann::json::parse(*Text);
    if (J.is_object()) return J;
  } catch (const std::exception &) {}
  return makeError(Name, ": not a platform file (a JSON object)");
}
/// Spearman's rho, or why there is none: a profile of kernels the roofline
/// prices alike (one op on one shape) has all predictions tied.
std::string rhoText(double Rho) {
  return std::isnan(Rho) ? std::string("undefined (all predictions tie)") : formatNumber(Rho);
}
} // namespace

namespace onnxp::tool {

int runCalibrate(int Argc, char **Argv) {
  CLI::App App{"Fit the platform's roofline (peak FLOP/s, bandwidth, kernel overhead) to an ONNX Runtime "
               "profile and write it as a platform file"};
  App.name("onnx-partition calibrate");
  CompileOptions O = toolRequest();
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  App.add_option("-o,--output", O.outputs.output,
                 "Write the calibrated platform file here (JSON, for --platform)")
      ->type_name("platform.json")
      ->group("Output");
  std::string Measure;
  int Runs = 10, Warmup = 3, Threads = 1;
  App.add_option("--measure", Measure,
                 "Run the model in ONNX Runtime first (test/ort/profile.js, one intra-op thread by default) "
                 "and write its profile here; it then prices the CPU (implies --profile-device cpu)")
      ->type_name("PROFILE.json")
      ->group("Calibration");
  App.add_option("--runs", Runs, "--measure: timed runs")->check(CLI::Range(1, 10000))->group("Calibration");
  App.add_option("--warmup", Warmup, "--measure: untimed runs first")
      ->check(CLI::Range(0, 10000))
      ->group("Calibration");
  App.add_option("--threads", Threads, "--measure: intra-op threads")
      ->check(CLI::Range(1, 1024))
      ->group("Calibration");
  std::string Target;
  App.add_option("--target", Target,
                 "Which device kind of the written platform takes the fit: cpu or acc (default: the kind the "
                 "profile measured; acc when the platform's accelerators stand for this machine's cores)")
      ->check(CLI::IsMember({"cpu", "acc"}))
      ->group("Calibration");
  CalibrationOptions Fit;
  bool DeviceOnly = false;
  App.add_flag("--device-only", DeviceOnly,
               "Fit only the three device parameters, no per-op-kind efficiencies")
      ->group("Calibration");
  App.add_option("--min-kind-samples", Fit.minKindSamples,
                 "Profiled nodes an op kind needs for its own efficiencies (default 3)")
      ->check(CLI::Range(1, 1000000))
      ->group("Calibration");
  addPipelineOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;
  Fit.perKind = !DeviceOnly;
  if (O.profile.empty() == Measure.empty())
    return reportError(makeUsageError("calibrate needs exactly one of --profile ORT.json (a profile "
                                      "test/ort/profile.js wrote) and --measure PROFILE.json (run it now)"));
  if (O.outputs.output.empty()) return reportError(makeUsageError("calibrate needs -o platform.json"));
  if (Error E = checkWritable(O.outputs.output, "-o")) return reportError(E);
  if (!Measure.empty()) {
    if (Error E = checkWritable(Measure, "--measure")) return reportError(E);
    // Issue 39 item 4: the profile ORT writes and the platform file are two
    // outputs; one path would leave the profile behind a usage error.
    if (samePath(Measure, O.outputs.output))
      return reportError(makeUsageError("--measure '", Measure, "' and -o '", O.outputs.output,
                                        "' are the same file; each output needs its own file"));
  }
  O.ortOptimizations = OrtOptimizationLevel::None; // the profile measures every node as a kernel

  if (!Measure.empty()) {
    // Price once without the profile to name the nodes, run ORT, then price with it.
    Expected<PassContext> First = loadCompileContext(O);
    if (!First) return reportError(First.takeError());
    if (!First->model)
      return reportError(makeUsageError("calibrate needs an ONNX model, not a JSON workload"));
    // Now that the model (and its external data, platform, cost table) are
    // known inputs: ORT's profile must not be written over any of them.
    if (Expected<OutputKind> K = classifyOutput(Measure, "--measure"); !K) return reportError(K.takeError());
    if (Error E = runCompilePipeline(*First, O, /*WithPartition=*/false)) return reportError(E);
    // The model ORT runs, the profile it writes and its own temporaries go
    // to a scratch folder of ours beside the profile (never over a user's
    // file of a guessable name); a signal meanwhile stops ORT and removes
    // the folder (issue 39, item 9). The profile is renamed into place
    // once measured, so --measure holds a whole profile or nothing new.
    Expected<ScratchDirectory> Scratch = ScratchDirectory::createBeside(Measure);
    if (!Scratch) return reportError(Scratch.takeError());
    const std::string Emitted = Scratch->path() + "/model.onnx", Measured = Scratch->path() + "/profile.json";
    if (Error E = emitNamedModel(*First, Emitted)) return reportError(E);
    if (Error E = runOrtProfileScript(Emitted, Measured, Runs, Warmup, Threads, Scratch->path()))
      return reportError(E);
    Expected<std::string> Profile = readFile(Measured, kMaxModelFileBytes, "an ONNX Runtime profile", false);
    if (!Profile) return reportError(Profile.takeError());
    if (Error E = writeFileAtomically(Measure, *Profile)) return reportError(E);
    O.profile = Measure;
    // The measurement runs on a CPU core; it prices the kind it calibrates
    // (acc when the platform's accelerators stand for this machine's cores).
    O.profileDevice = Target == "acc" ? MeasuredDevice::Accelerator : MeasuredDevice::Cpu;
  }
  Expected<PassContext> Ctx = loadCompileContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (!Ctx->model) return reportError(makeUsageError("calibrate needs an ONNX model, not a JSON workload"));
  if (Error E = runCompilePipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  const bool OnCpu = O.profileDevice == MeasuredDevice::Cpu;
  const bool ToCpu = Target.empty() ? OnCpu : Target == "cpu";
  const CostGraph &G = Ctx->graph;
  std::vector<CalibrationSample> S;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(static_cast<int>(V));
    double T = OnCpu ? N.cpuTime : N.accTime;
    if (N.costSource != "profile" || !(T > 0)) continue;
    S.push_back({N.op, nodeWork(G, static_cast<int>(V), *Ctx->model), T});
  }
  if (S.size() < 3)
    return reportError(makeError(O.profile, ": only ", S.size(),
                                 " profiled nodes match the model; calibrate needs at least 3"));
  const DeviceSpec Before = ToCpu ? Ctx->platform.cpu : Ctx->platform.accelerator;
  // Issue 37, item 7: a fit that predicts kernels it did not see worse
  // than the platform as given is refused, with the numbers.
  const HeldOutCheck Held = checkOnHeldOut(S, Before, Fit);
  if (Held.worse)
    return reportError(
        makeError(O.profile, ": the calibrated fit predicts the ", Held.heldOut, " held-out kernels (every ",
                  kHeldOutEvery, "th profiled node) worse than the uncalibrated platform: their total time ",
                  formatNumber(Held.after.totalError), "% off against ", formatNumber(Held.before.totalError),
                  "%, MAPE ", formatNumber(Held.after.mape), "% against ", formatNumber(Held.before.mape),
                  "%, Spearman rho ", rhoText(Held.after.rho), " against ", rhoText(Held.before.rho),
                  "; nothing written (", Fit.perKind ? "try --device-only, or " : "",
                  "plan with the platform as it is)"));
  std::vector<CalibrationLimit> Limits;
  const DeviceSpec After = calibrateDevice(S, Before, Fit, &Limits);
  FitQuality QB = fitQuality(S, Before), QA = fitQuality(S, After);

  // The platform given, with the fitted device kind replaced: a platform
  // file's own JSON (its counts and links stay), else its preset as base.
  Expected<nlohmann::json> Base = basePlatformJson(O.platform.platform);
  if (!Base) return reportError(Base.takeError());
  nlohmann::json J = std::move(*Base);
  nlohmann::json &D = J[ToCpu ? "cpu" : "accelerator"];
  if (!D.is_object()) D = nlohmann::json::object();
  D["peakFlops"] = After.peakFlops;
  D["memBandwidth"] = After.memBandwidth;
  D["kernelOverheadMs"] = After.kernelOverheadMs;
  D.erase("opKinds");
  for (const auto &[Kind, E] : After.opKinds)
    D["opKinds"][Kind] = {{"flopsEfficiency", E.flopsEfficiency},
                          {"bandwidthEfficiency", E.bandwidthEfficiency},
                          {"kernelOverheadMs", E.kernelOverheadMs},
                          {"samples", E.samples}};
  if (Error E = writeFileAtomically(O.outputs.output, J.dump(2) + "\n")) return reportError(E);

  std::cout << "calibrate: " << S.size() << " profiled nodes, measured on " << (OnCpu ? "cpu" : "acc")
            << ", fitted as the platform's " << (ToCpu ? "cpu" : "accelerator") << "\n";
  std::cout << "  before: peak " << formatNumber(Before.peakFlops) << " FLOP/s, bandwidth "
            << formatNumber(Before.memBandwidth) << " B/s, overhead " << formatNumber(Before.kernelOverheadMs)
            << " ms: Spearman rho " << rhoText(QB.rho) << ", MAPE " << formatNumber(QB.mape) << "%\n";
  std::cout << "  after:  peak " << formatNumber(After.peakFlops) << " FLOP/s, bandwidth "
            << formatNumber(After.memBandwidth) << " B/s, overhead " << formatNumber(After.kernelOverheadMs)
            << " ms: Spearman rho " << rhoText(QA.rho) << ", MAPE " << formatNumber(QA.mape) << "%\n";
  if (Held.heldOut > 0)
    std::cout << "  held out: " << Held.heldOut << " kernels (every " << kHeldOutEvery
              << "th, fitted without them): total time " << formatNumber(Held.before.totalError)
              << "% off before, " << formatNumber(Held.after.totalError) << "% after; MAPE "
              << formatNumber(Held.before.mape) << "% before, " << formatNumber(Held.after.mape)
              << "% after; Spearman rho " << rhoText(Held.before.rho) << " before, "
              << rhoText(Held.after.rho) << " after\n";
  if (!After.opKinds.empty()) {
    std::cout << "  op kinds (of peak FLOP/s, of bandwidth, overhead; nodes):";
    for (const auto &[Kind, E] : After.opKinds)
      std::cout << "\n    " << Kind << ": " << formatNumber(E.flopsEfficiency) << ", "
                << formatNumber(E.bandwidthEfficiency) << ", " << formatNumber(E.kernelOverheadMs * 1e3)
                << " us; " << E.samples
                << (E.samples < Fit.minKindSamples
                        ? " (one factor on both device-wide rates, the device's overhead: too few nodes)"
                        : "");
    std::cout << "\n";
  }
  // Issue 37, item 7: a parameter clamped at the peak or left at the
  // grid's edge is said, with its kind and kernel count.
  for (const std::string &Line : describeLimits(Limits)) std::cout << "  note: " << Line << "\n";
  std::cout << "  wrote " << O.outputs.output << " (use it with --platform)\n";
  return 0;
}

} // namespace onnxp::tool
