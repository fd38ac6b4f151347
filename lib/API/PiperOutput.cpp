//===- API/PiperOutput.cpp - --algo piper on a Piper input ---------------===//
#include "onnx-partition/API/PiperOutput.h"

#include "onnx-partition/Partition/piper/PiperPartitioner.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

using nlohmann::json;
using namespace onnxp;

namespace {
std::string exact(double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.17g", V);
  return Buf;
}

std::string layerList(const PiperInstance &I, const PiperStage &St) {
  std::string Out;
  for (size_t Q = 0; Q < St.layers.size(); ++Q) {
    const PiperLayer &L = I.layers[St.layers[Q]];
    Out += (Q ? " " : "") + std::to_string(L.fileId) + ":" + L.tmpcs.at(St.tensorParallel)[St.tmpc[Q]].id;
  }
  return Out;
}

json planJson(const PiperInstance &I, const PiperPlan &P, const PiperPlanPrice &Price) {
  json Stages = json::array();
  for (size_t S = 0; S < P.stages.size(); ++S) {
    const PiperStage &St = P.stages[S];
    json Layers = json::array();
    for (size_t Q = 0; Q < St.layers.size(); ++Q) {
      const PiperLayer &L = I.layers[St.layers[Q]];
      Layers.push_back(
          {{"id", L.fileId}, {"name", L.name}, {"tmpc", L.tmpcs.at(St.tensorParallel)[St.tmpc[Q]].id}});
    }
    const PiperStagePrice &SP = Price.stages[S];
    Stages.push_back({{"layers", Layers},
                      {"data_parallel_degree", St.dataParallel},
                      {"tensor_parallel_degree", St.tensorParallel},
                      {"devices", St.dataParallel * St.tensorParallel},
                      {"micro_batches_in_flight", SP.inFlight},
                      {"memory_bytes", SP.memory},
                      {"time_per_sample_s", SP.timePerSample}});
  }
  return {{"time_per_sample_s", Price.timePerSample},
          {"devices", Price.devices},
          {"sum_data_parallel", Price.sumDataParallel},
          {"stages", Stages}};
}

std::string summaryOf(const PiperInstance &I, const std::string &Input, const PiperRun &Run) {
  std::ostringstream OS;
  OS << "piper: " << Input << ": " << I.layers.size() << " layers, " << I.maxDevices << " devices, "
     << exact(I.maxMemoryPerDevice) << " bytes per device, " << I.mbsInBatch << " micro-batches, bandwidth "
     << exact(I.bandwidth) << " B/s\n";
  OS << "  DP: " << Run.result.ideals << " ideals, " << Run.result.pairs << " ideal pairs, "
     << Run.result.candidates << " candidates\n";
  for (size_t S = 0; S < Run.result.plan.stages.size(); ++S) {
    const PiperStage &St = Run.result.plan.stages[S];
    const PiperStagePrice &SP = Run.price.stages[S];
    OS << "  stage " << S << ": d " << St.dataParallel << " x t " << St.tensorParallel << " = "
       << St.dataParallel * St.tensorParallel << " devices, y " << SP.inFlight << ", memory "
       << exact(SP.memory) << " B, " << exact(SP.timePerSample) << " s/sample; layers " << layerList(I, St)
       << "\n";
  }
  OS << "time per sample: " << exact(Run.price.timePerSample) << " s (" << Run.result.plan.stages.size()
     << " stages, " << Run.price.devices << " devices, sum of d " << Run.price.sumDataParallel << ")\n";
  if (Run.baseline.stages.empty()) {
    OS << "PipeDream-2BW equal split: no configuration fits\n";
  } else {
    const PiperStage &B0 = Run.baseline.stages.front();
    OS << "PipeDream-2BW equal split: " << exact(Run.baselinePrice.timePerSample) << " s ("
       << Run.baseline.stages.size() << " stages, d " << B0.dataParallel << ", t " << B0.tensorParallel
       << ", " << I.layers[B0.layers.front()].tmpcs.at(B0.tensorParallel)[B0.tmpc.front()].id << "), "
       << exact(Run.baselinePrice.timePerSample / Run.price.timePerSample) << "x piper's\n";
  }
  return OS.str();
}
} // namespace

Expected<PiperInstance> onnxp::piperInstanceFor(const PiperInstance &File, const CompileOptions &O,
                                                const Platform &P) {
  PiperInstance I = File;
  if (O.platform.devices > 0) I.maxDevices = O.platform.devices;
  if (I.maxDevices > 10000) return makeUsageError("--algo piper: at most 10000 devices (Piper's limit)");
  if (!O.platform.memory.empty()) {
    Expected<double> M = parseByteSize(O.platform.memory);
    if (!M) return M.takeError();
    if (!(*M > 0)) return makeUsageError("--memory must be positive");
    I.maxMemoryPerDevice = *M;
  }
  if (O.outputs.microbatches > 0) I.mbsInBatch = O.outputs.microbatches;
  if (O.platform.platform != "default") I.bandwidth = P.peerLinkBandwidth;
  return I;
}

Expected<CompileResult> onnxp::compilePiper(PassContext &Ctx, const CompileOptions &O,
                                            OutputTransaction *Files) {
  const OutputOptions OO = outputOptionsFor(O);
  if (!OO.output.empty() || !OO.emitStages.empty() || !OO.dot.empty() || !OO.trace.empty() ||
      !O.loadPlan.empty() || !O.passes.empty())
    return makeUsageError(
        "--algo piper plans on '", O.input,
        "' without an ONNX model: -o, --emit-stages, --dot, --trace, --load-plan and --passes "
        "do not apply; use --report");
  Expected<PiperInstance> I = piperInstanceFor(*Ctx.piper, O, Ctx.platform);
  if (!I) return I.takeError();
  Expected<const PartitionerInfo *> Info = findPartitioner(O.algorithm);
  if (!Info) return Info.takeError();
  PiperRun Found;
  ONNXP_RETURN_IF_ERROR((*Info)->runPiper(*I, Ctx.options.partition, Found));
  const PiperRun *Run = &Found;
  CompileResult R;
  R.platform = Ctx.platform;
  R.plan.algorithm = O.algorithm;
  R.plan.objective = Run->price.timePerSample;
  R.summary = summaryOf(*I, O.input, *Run);
  json Report = {{"algorithm", O.algorithm},        {"input", O.input},
                 {"max_devices", I->maxDevices},    {"max_memory_per_device", I->maxMemoryPerDevice},
                 {"micro_batches", I->mbsInBatch},  {"bandwidth", I->bandwidth},
                 {"ideals", Run->result.ideals},    {"ideal_pairs", Run->result.pairs},
                 {"dp_value", Run->result.dpValue}, {"plan", planJson(*I, Run->result.plan, Run->price)}};
  Report["baseline"] =
      Run->baseline.stages.empty() ? json(nullptr) : planJson(*I, Run->baseline, Run->baselinePrice);
  R.reportJson = Report.dump(2) + "\n";
  if (Files && !OO.report.empty()) ONNXP_RETURN_IF_ERROR(Files->add(OO.report, R.reportJson));
  return R;
}
