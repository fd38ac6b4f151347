//===- Pass/PassManager.cpp - Pipeline parsing, running, instrumentation ===//
//
// Dumps use one fixed banner, "# *** Cost graph dump after <pass> ***" (or
// "Output model dump" after the write-back passes, OutputModelDump.cpp), so
// tests and people can grep for it (STYLE.md: the pass manager prints the
// IR, passes never do).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Pass/PassManager.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iomanip>
#include <ostream>
#include <sstream>

using namespace onnxp;

Expected<PassManager> PassManager::parse(const std::string &Pipeline) {
  PassManager PM;
  std::stringstream SS(Pipeline);
  std::string Name;
  while (std::getline(SS, Name, ',')) {
    size_t B = Name.find_first_not_of(" \t"), E = Name.find_last_not_of(" \t");
    if (B == std::string::npos) return makeUsageError("empty pass name in --passes '", Pipeline, "'");
    Expected<std::unique_ptr<Pass>> P = createPass(Name.substr(B, E - B + 1));
    if (!P) return P.takeError();
    PM.add(std::move(*P));
  }
  if (PM.Passes.empty()) return makeUsageError("--passes names no pass");
  return PM;
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> N;
  for (const auto &P : Passes) N.push_back(P->name());
  return N;
}

void onnxp::printDump(std::ostream &OS, const PassContext &Ctx, const std::string &After) {
  OS << "# *** Cost graph dump after " << After << " ***\n";
  if (!Ctx.hasGraph) {
    OS << "costgraph (not built yet)\n";
    return;
  }
  Ctx.graph.print(OS);
  if (Ctx.chain) Ctx.chain->print(OS);
  if (Ctx.plan) {
    const Plan &P = *Ctx.plan;
    OS << "plan algorithm=" << P.algorithm << " objective=" << formatNumber(P.objective)
       << " kind=" << objectiveName(P.objectiveKind) << "\n";
    for (size_t V = 0; V < P.device.size(); ++V)
      OS << "place " << V << " '" << Ctx.graph.node(V).name << "' " << Ctx.platform.deviceName(P.device[V])
         << "\n";
  }
}

Error PassManager::run(PassContext &Ctx, const Instrumentation &I) {
  for (const auto &P : Passes) {
    auto Start = std::chrono::steady_clock::now();
    const std::clock_t CpuStart = std::clock(); // issue 38: CPU beside wall on a loaded machine
    if (I.verbose && I.logStream) *I.logStream << "onnx-partition: running pass " << P->name() << "\n";
    Expected<bool> Changed = P->run(Ctx);
    double Secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
    const double CpuSecs = static_cast<double>(std::clock() - CpuStart) / CLOCKS_PER_SEC;
    if (!Changed) return Changed.takeError().withContext(P->name());
    if (I.afterPass) ONNXP_RETURN_IF_ERROR(I.afterPass(P->name(), Ctx));
    if (I.timePasses && I.logStream)
      *I.logStream << "time-passes: " << std::setw(10) << std::fixed << std::setprecision(4) << Secs * 1e3
                   << " ms  " << std::setw(10) << CpuSecs * 1e3 << " cpu ms  " << P->name()
                   << (*Changed ? "" : " (no change)") << "\n"
                   << std::defaultfloat;
    if (I.dumpStream && (I.printAfter.count(P->name()) || I.printAfter.count("*"))) {
      if (P->dumpKind() == DumpKind::OutputModel) printOutputModelDump(*I.dumpStream, Ctx, P->name());
      else printDump(*I.dumpStream, Ctx, P->name());
    }
  }
  return Error::success();
}

namespace {
/// The plan step and the write-back passes R asks for, in order.
std::vector<std::string> backEnd(const PipelineRequest &R) {
  std::vector<std::string> P;
  if (R.plan) P.push_back(R.loadPlan ? "load-plan" : "partition");
  if (R.onnx && (R.writeModel || R.writeStages)) {
    P.push_back("insert-transfers");
    P.push_back("annotate-placement");
    if (R.writeStages) P.push_back("extract-stages");
    P.push_back("verify-output");
  }
  return P;
}

std::string join(const std::vector<std::string> &Names) {
  std::string S;
  for (const std::string &N : Names) S += (S.empty() ? "" : ",") + N;
  return S;
}
} // namespace

std::string onnxp::defaultPipeline(const PipelineRequest &R) {
  std::vector<std::string> P;
  if (R.onnx) {
    P = {"infer-shapes", "build-cost-graph", "classify-training"};
    if (R.training) P.push_back("derive-backward");
    P.push_back("estimate-costs");
    // Issues 21/23: what ORT folds is placed with its readers, not planned.
    if (R.plan) P.push_back("drop-folded");
  }
  for (const std::string &N : backEnd(R)) P.push_back(N);
  return join(P);
}

std::string onnxp::defaultPipeline(bool IsOnnx, bool Training, bool WithPartition) {
  PipelineRequest R;
  R.onnx = IsOnnx;
  R.training = Training;
  R.plan = WithPartition;
  return defaultPipeline(R);
}

std::string onnxp::completePipeline(const std::string &Pipeline, const PipelineRequest &R) {
  std::vector<std::string> Have;
  std::stringstream SS(Pipeline);
  std::string Name;
  while (std::getline(SS, Name, ',')) {
    size_t B = Name.find_first_not_of(" \t"), E = Name.find_last_not_of(" \t");
    Have.push_back(B == std::string::npos ? "" : Name.substr(B, E - B + 1));
  }
  std::string Out = Pipeline;
  bool HasPlanStep = false;
  for (const std::string &H : Have) HasPlanStep |= H == "partition" || H == "load-plan";
  // A user's pipeline that makes no plan stays as it is: the tool then says
  // there is nothing to write.
  if (!HasPlanStep && !R.loadPlan) return Pipeline;
  for (const std::string &N : backEnd(R)) {
    bool IsPlanStep = N == "partition" || N == "load-plan";
    if (IsPlanStep && HasPlanStep) continue;
    if (std::find(Have.begin(), Have.end(), N) != Have.end()) continue;
    Out += (Out.empty() ? "" : ",") + N;
  }
  return Out;
}
