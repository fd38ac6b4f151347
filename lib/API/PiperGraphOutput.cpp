//===- API/PiperGraphOutput.cpp - --algo piper on an ONNX model ----------===//
#include "onnx-partition/API/PiperGraphOutput.h"

#include "onnx-partition/API/PiperGraphStages.h"

#include "PiperGraphPictures.h"
#include "onnx-partition/API/WriteBack.h"
#include "onnx-partition/Partition/piper/PiperGraphPlanner.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <sstream>

using nlohmann::json;
using namespace onnxp;

namespace {
constexpr int kMicrobatchesPerAccelerator = 4; // as auto's implied global batch (Partitioner.cpp)

std::string ms(double V) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.6g ms", V);
  return Buf;
}

std::string degreeList(const std::vector<int> &D) {
  std::string Out;
  for (int T : D) Out += (Out.empty() ? "" : ", ") + std::to_string(T);
  return "{" + Out + "}";
}

std::string layerRange(const PiperGraphRun &Run, const PiperGraphStage &St) {
  const std::string &A = Run.layers[St.layers.front()].name, &B = Run.layers[St.layers.back()].name;
  return std::to_string(St.layers.front()) + "-" + std::to_string(St.layers.back()) + " (" + A +
         (St.layers.size() > 1 ? " .. " + B : "") + ")";
}

int recomputed(const PiperGraphStage &St) {
  int N = 0;
  for (char R : St.recompute) N += R != 0;
  return N;
}

std::string summaryOf(const PiperGraphRun &Run, const PiperGraphOptions &PO, const Platform &P,
                      const std::string &Input, double Seconds) {
  std::ostringstream OS;
  int Split = 0;
  std::string Whole;
  for (const MegatronLayer &L : Run.layers) {
    if (L.degrees.size() > 1) ++Split;
    else Whole += (Whole.empty() ? "" : ", ") + L.name;
  }
  OS << "piper: " << Input << ": " << Run.layers.size() << " layers, " << P.accelerators << " accelerators ("
     << P.nodes << (P.nodes == 1 ? " node" : " nodes") << "), " << PO.microbatches << " micro-batches of "
     << PO.microbatchSamples << (PO.microbatchSamples == 1 ? " sample" : " samples") << " ("
     << pipelineScheduleName(PO.schedule) << ")\n";
  OS << "  Megatron layers: " << Split << " of " << Run.layers.size();
  for (const MegatronLayer &L : Run.layers)
    if (L.degrees.size() > 1) {
      OS << ", t in " << degreeList(L.degrees);
      break;
    }
  OS << (Whole.empty() ? "" : "; whole on each GPU: " + Whole) << "\n";
  for (const PiperGraphPlan &Pl : Run.plans)
    OS << "  TP at most " << Pl.maxTensorParallel << ": "
       << (Pl.ok() ? "iteration " + ms(Pl.price.iterationMs) + ", " + Pl.layout() + " (" + Pl.method + ")"
                   : "no plan (" + Pl.status + ")")
       << "\n";
  const PiperGraphPlan &Best = Run.plans[Run.best];
  for (size_t S = 0; S < Best.stages.size(); ++S) {
    const PiperGraphStage &St = Best.stages[S];
    const IterationStagePrice &SP = Best.price.stages[S];
    OS << "  stage " << S << ": PP " << S + 1 << "/" << Best.stages.size() << " x DP " << St.dataParallel
       << " x TP " << St.tensorParallel << " on accelerators " << St.firstDevice << "-"
       << St.firstDevice + St.dataParallel * St.tensorParallel - 1 << ": layers " << layerRange(Run, St)
       << ", recompute " << recomputed(St) << ", memory " << humanBytes(SP.peakMemory) << ", all-reduce "
       << ms(SP.allReduceMs) << "\n";
  }
  const PiperGraphPlan &NoTp = Run.plans.front();
  OS << "iteration: " << ms(Best.price.iterationMs) << " (" << Best.layout() << ")";
  if (NoTp.ok()) {
    char Ratio[32];
    std::snprintf(Ratio, sizeof Ratio, "%.3fx", NoTp.price.iterationMs / Best.price.iterationMs);
    OS << "; without tensor parallelism " << ms(NoTp.price.iterationMs) << " (" << NoTp.layout() << "), "
       << Ratio;
  } else {
    OS << "; without tensor parallelism no plan fits";
  }
  char Cpu[32];
  std::snprintf(Cpu, sizeof Cpu, "%.2f", Seconds);
  OS << "\n  planned in " << Cpu << " s\n";
  return OS.str();
}

json planJson(const PiperGraphRun &Run, const PiperGraphPlan &Pl) {
  json Stages = json::array();
  for (size_t S = 0; Pl.ok() && S < Pl.stages.size(); ++S) {
    const PiperGraphStage &St = Pl.stages[S];
    json Layers = json::array();
    for (size_t Q = 0; Q < St.layers.size(); ++Q)
      Layers.push_back({{"name", Run.layers[St.layers[Q]].name}, {"recompute", St.recompute[Q] != 0}});
    Stages.push_back({{"data_parallel_degree", St.dataParallel},
                      {"tensor_parallel_degree", St.tensorParallel},
                      {"first_accelerator", St.firstDevice},
                      {"peak_memory_bytes", Pl.price.stages[S].peakMemory},
                      {"all_reduce_ms", Pl.price.stages[S].allReduceMs},
                      {"layers", Layers}});
  }
  json J = {{"max_tensor_parallel", Pl.maxTensorParallel},
            {"method", Pl.method},
            {"layout", Pl.layout()},
            {"stages", Stages}};
  if (Pl.ok()) {
    J["iteration_ms"] = Pl.price.iterationMs;
    if (Pl.method == "piper-dp") J["dp_time_per_sample_s"] = Pl.dpTimePerSample;
  } else {
    J["status"] = Pl.status;
  }
  return J;
}
} // namespace

Expected<CompileResult> onnxp::compilePiperGraph(PassContext &Ctx, const CompileOptions &O,
                                                 OutputTransaction *Files) {
  const OutputOptions OO = outputOptionsFor(O);
  if (!O.loadPlan.empty() || !O.passes.empty())
    return makeUsageError("--algo piper on an ONNX model makes its own plan: --load-plan and --passes do not "
                          "apply; use --report, --dot, --trace, -o or --emit-stages");
  if (!OO.emitStages.empty()) ONNXP_RETURN_IF_ERROR(checkStagesDir(OO.emitStages));
  const PartitionOptions &Part = Ctx.options.partition;
  if (Part.objective && *Part.objective != Objective::Iteration)
    return makeUsageError("--algo piper on an ONNX model minimises the objective iteration, not ",
                          objectiveName(*Part.objective));
  ONNXP_RETURN_IF_ERROR(runCompilePipeline(Ctx, O, /*WithPartition=*/false));
  if (!Ctx.hasGraph || !Ctx.costed)
    return makeInternalError("piper: the analysis passes made no priced graph");
  PiperGraphOptions PO;
  PO.microbatches = Part.globalMicrobatches > 0 ? Part.globalMicrobatches
                                                : kMicrobatchesPerAccelerator * Ctx.platform.accelerators;
  PO.microbatchSamples = std::max(1, Part.microbatchSamples);
  PO.optimizerTraffic = Part.optimizerTraffic;
  PO.schedule = Part.pipelineSchedule == PipelineScheduleKind::Gpipe ? PipelineScheduleKind::Gpipe
                                                                     : PipelineScheduleKind::OneFOneB;
  PO.deadline = Part.deadline;
  PO.idealLimit = std::min<size_t>(Part.idealLimit, PO.idealLimit);
  const auto Start = std::chrono::steady_clock::now();
  Expected<PiperGraphRun> Run = planPiperGraph(Ctx.graph, *Ctx.model, Ctx.platform, PO);
  if (!Run) return Run.takeError();
  const double Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  const PiperGraphPlan &Best = Run->plans[Run->best];
  CompileResult R;
  R.platform = Ctx.platform;
  R.plan.algorithm = O.algorithm;
  R.plan.objective = Best.price.iterationMs;
  R.plan.objectiveKind = Objective::Iteration;
  R.summary = summaryOf(*Run, PO, Ctx.platform, O.input, Seconds);
  R.notes = Ctx.notes;
  json Layers = json::array();
  for (const MegatronLayer &L : Run->layers) {
    json Blocks = json::array();
    for (const MegatronBlock &B : L.blocks)
      Blocks.push_back({{"kind", B.attention ? "attention" : "mlp"}, {"heads", B.heads}});
    Layers.push_back({{"name", L.name}, {"tensor_parallel_degrees", L.degrees}, {"megatron_blocks", Blocks}});
  }
  json Plans = json::array();
  for (const PiperGraphPlan &Pl : Run->plans) Plans.push_back(planJson(*Run, Pl));
  json Report = {{"algorithm", O.algorithm},
                 {"input", O.input},
                 {"objective", "iteration"},
                 {"accelerators", Ctx.platform.accelerators},
                 {"micro_batches", PO.microbatches},
                 {"micro_batch_samples", PO.microbatchSamples},
                 {"layers", Layers},
                 {"plan", planJson(*Run, Best)},
                 {"without_tensor_parallel", planJson(*Run, Run->plans.front())},
                 {"plans_by_max_tensor_parallel", Plans}};
  R.reportJson = Report.dump(2) + "\n";
  if (Files && !OO.report.empty()) ONNXP_RETURN_IF_ERROR(Files->add(OO.report, R.reportJson));
  // Issue 34: the best plan drawn, stage by stage, and its iteration traced.
  if (!OO.dot.empty()) {
    DotOptions DO;
    Expected<DotDetail> Detail = parseDotDetail(OO.dotDetail);
    if (!Detail) return Detail.takeError();
    DO.detail = *Detail;
    R.dot = piperGraphDot(Ctx.graph, *Run, Best, Ctx.platform, DO);
    if (Files) ONNXP_RETURN_IF_ERROR(Files->add(OO.dot, R.dot));
  }
  if (!OO.trace.empty()) {
    Expected<std::string> T = piperGraphTrace(*Run, Best, Ctx.platform, PO);
    if (!T) return T.takeError();
    R.trace = std::move(*T);
    if (Files) ONNXP_RETURN_IF_ERROR(Files->add(OO.trace, R.trace));
  }
  // Issue 34 item 3: the plan on the model as IR 11 sharding specs.
  if (Files && !OO.output.empty()) {
    Expected<onnx::ModelProto> Annotated = annotatePiperGraphModel(Ctx.graph, *Ctx.model, *Run, Best);
    if (!Annotated) return Annotated.takeError();
    std::string Bytes;
    if (!Annotated->SerializeToString(&Bytes)) return makeError("cannot serialize ", OO.output);
    ONNXP_RETURN_IF_ERROR(Files->add(OO.output, Bytes));
    R.summary += "  note: wrote " + OO.output +
                 " (IR 11: the plan's stages and tensor-parallel splits as "
                 "NodeProto.device_configurations)\n";
  }
  // Issue 34 item 3: the best plan's stages, tensor-parallel ones as shards.
  if (Files && !OO.emitStages.empty()) {
    Expected<int> N = writePiperGraphStages(Ctx.graph, *Ctx.model, *Run, Best, PO, OO.emitStages, *Files);
    if (!N) return N.takeError();
    R.notes.push_back("wrote " + std::to_string(*N) + " stage models and pipeline.json to " + OO.emitStages +
                      " (" + Best.layout() + "; run them with tools/ort-runner)");
    R.summary += "  note: " + R.notes.back() + "\n"; // the piper summary is printed as it is
  }
  return R;
}
