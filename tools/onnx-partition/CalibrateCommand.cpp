//===- tools/onnx-partition/CalibrateCommand.cpp - onnx-partition calibrate ===//
//
// Issue 23, item 3 (in part): fit the measured device kind's roofline
// parameters (peak FLOP/s, memory bandwidth, per-kernel overhead) to an ONNX
// Runtime profile of the model, by least squares on log times (a ratio
// error, so a 5 us kernel weighs as much as a 50 ms one), write them as a
// platform file --platform reads, and print Spearman's rho and the mean
// absolute percentage error of the per-node times before and after.
// The model is priced as written (--ort-optimizations none): test/ort/
// profile.js runs ORT with graph optimizations disabled, one kernel per node.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Options.h"
#include "OrtScripts.h"

#include "onnx-partition/Cost/AnalyticalCosts.h"
#include "onnx-partition/Cost/RankCorrelation.h"
#include "onnx-partition/Cost/Roofline.h"
#include "onnx-partition/Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

namespace {
struct Sample {
  OpWork work;
  double measuredMs;
};

struct FitQuality {
  double rho = NAN, mape = NAN, logSse = 0;
};

FitQuality quality(const std::vector<Sample> &S, const DeviceSpec &D) {
  FitQuality Q;
  std::vector<double> Pred, Meas;
  double Ape = 0;
  for (const Sample &X : S) {
    double P = rooflineMs(X.work, D);
    Pred.push_back(P);
    Meas.push_back(X.measuredMs);
    Ape += std::fabs(P - X.measuredMs) / X.measuredMs;
    double L = std::log(std::max(P, 1e-9) / X.measuredMs);
    Q.logSse += L * L;
  }
  Q.rho = spearmanRho(Pred, Meas);
  Q.mape = 100 * Ape / static_cast<double>(S.size());
  return Q;
}

/// Coordinate search on a log grid, refined three times around the best
/// point: the roofline's max() makes the objective piecewise, so a grid is
/// safer than a gradient method, and three parameters keep it cheap.
DeviceSpec fit(const std::vector<Sample> &S, DeviceSpec D) {
  double LogP = std::log10(D.peakFlops), LogB = std::log10(D.memBandwidth),
         LogO = std::log10(std::max(D.kernelOverheadMs, 1e-6));
  double Span = 2.0; // decades either side
  for (int Round = 0; Round < 4; ++Round, Span /= 4) {
    const int Steps = 16;
    double Best = INFINITY, BP = LogP, BB = LogB, BO = LogO;
    for (int I = -Steps; I <= Steps; ++I)
      for (int J = -Steps; J <= Steps; ++J)
        for (int K = -Steps; K <= Steps; ++K) {
          DeviceSpec T = D;
          T.peakFlops = std::pow(10, LogP + Span * I / Steps);
          T.memBandwidth = std::pow(10, LogB + Span * J / Steps);
          T.kernelOverheadMs = std::pow(10, LogO + Span * K / Steps);
          double E = 0;
          for (const Sample &X : S) {
            double L = std::log(std::max(rooflineMs(X.work, T), 1e-9) / X.measuredMs);
            E += L * L;
          }
          if (E < Best)
            Best = E, BP = std::log10(T.peakFlops), BB = std::log10(T.memBandwidth),
            BO = std::log10(T.kernelOverheadMs);
        }
    LogP = BP, LogB = BB, LogO = BO;
  }
  D.peakFlops = std::pow(10, LogP);
  D.memBandwidth = std::pow(10, LogB);
  D.kernelOverheadMs = std::pow(10, LogO);
  return D;
}
} // namespace

namespace onnxp::tool {

int runCalibrate(int Argc, char **Argv) {
  CLI::App App{"Fit the platform's roofline (peak FLOP/s, bandwidth, kernel overhead) to an ONNX Runtime "
               "profile and write it as a platform file"};
  App.name("onnx-partition calibrate");
  ToolOptions O;
  addInputOptions(App, O);
  addPlatformOptions(App, O);
  App.add_option("-o,--output", O.output, "Write the calibrated platform file here (JSON, for --platform)")
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
  addPipelineOptions(App, O);
  if (int Code = parseOrExit(App, Argc, Argv); Code >= 0) return Code;
  if (O.profile.empty() == Measure.empty())
    return reportError(makeUsageError("calibrate needs exactly one of --profile ORT.json (a profile "
                                      "test/ort/profile.js wrote) and --measure PROFILE.json (run it now)"));
  if (O.output.empty()) return reportError(makeUsageError("calibrate needs -o platform.json"));
  if (Error E = checkWritable(O.output, "-o")) return reportError(E);
  if (!Measure.empty())
    if (Error E = checkWritable(Measure, "--measure")) return reportError(E);
  O.ortOptimizations = "none"; // the profile measures every node as a kernel

  if (!Measure.empty()) {
    // Price once without the profile to name the nodes, run ORT, then price with it.
    Expected<PassContext> First = loadContext(O);
    if (!First) return reportError(First.takeError());
    if (!First->model)
      return reportError(makeUsageError("calibrate needs an ONNX model, not a JSON workload"));
    if (Error E = runPipeline(*First, O, /*WithPartition=*/false)) return reportError(E);
    std::string Emitted = Measure + ".model.onnx";
    if (Error E = emitNamedModel(*First, Emitted)) return reportError(E);
    Error Run = runOrtProfileScript(Emitted, Measure, Runs, Warmup, Threads);
    std::remove(Emitted.c_str());
    if (Run) return reportError(Run);
    O.profile = Measure;
    O.profileDevice = "cpu";
  }
  Expected<PassContext> Ctx = loadContext(O);
  if (!Ctx) return reportError(Ctx.takeError());
  if (!Ctx->model) return reportError(makeUsageError("calibrate needs an ONNX model, not a JSON workload"));
  if (Error E = runPipeline(*Ctx, O, /*WithPartition=*/false)) return reportError(E);
  const bool OnCpu = O.profileDevice == "cpu";
  const CostGraph &G = Ctx->graph;
  std::vector<Sample> S;
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(static_cast<int>(V));
    double T = OnCpu ? N.cpuTime : N.accTime;
    if (N.costSource != "profile" || !(T > 0)) continue;
    S.push_back({nodeWork(G, static_cast<int>(V), *Ctx->model), T});
  }
  if (S.size() < 3)
    return reportError(makeError(O.profile, ": only ", S.size(),
                                 " profiled nodes match the model; calibrate needs at least 3"));
  const DeviceSpec Before = OnCpu ? Ctx->platform.cpu : Ctx->platform.accelerator;
  const DeviceSpec After = fit(S, Before);
  FitQuality QB = quality(S, Before), QA = quality(S, After);

  nlohmann::json J;
  J["base"] = O.platform.empty() ? std::string("default") : O.platform;
  nlohmann::json &D = J[OnCpu ? "cpu" : "accelerator"];
  D["peakFlops"] = After.peakFlops;
  D["memBandwidth"] = After.memBandwidth;
  D["kernelOverheadMs"] = After.kernelOverheadMs;
  if (Error E = writeFileAtomically(O.output, J.dump(2) + "\n")) return reportError(E);

  std::cout << "calibrate: " << S.size() << " profiled nodes, device kind " << (OnCpu ? "cpu" : "acc")
            << "\n";
  std::cout << "  before: peak " << formatNumber(Before.peakFlops) << " FLOP/s, bandwidth "
            << formatNumber(Before.memBandwidth) << " B/s, overhead " << formatNumber(Before.kernelOverheadMs)
            << " ms: Spearman rho " << formatNumber(QB.rho) << ", MAPE " << formatNumber(QB.mape) << "%\n";
  std::cout << "  after:  peak " << formatNumber(After.peakFlops) << " FLOP/s, bandwidth "
            << formatNumber(After.memBandwidth) << " B/s, overhead " << formatNumber(After.kernelOverheadMs)
            << " ms: Spearman rho " << formatNumber(QA.rho) << ", MAPE " << formatNumber(QA.mape) << "%\n";
  std::cout << "  wrote " << O.output << " (use it with --platform)\n";
  return 0;
}

} // namespace onnxp::tool
