//===- Pass/PlanLoading.cpp - --load-plan and the load-plan pass --------===//
//
// A plan can come back from three kinds of files, told apart by content: an
// ONNX model written by -o (its annotations are the plan, ReadPlacement.h),
// a JSON plan in the --report format ("assignment": [{node, device,
// stage?}]), or the seed 004 reference code's split JSON ({"cpus": [...],
// "fpgas": [...]}); Partition/io/PlanIO.h reads both JSON forms. Either
// way the plan must belong to this model -- every node named, no unknown
// node -- and it goes through finalizePlan like a partitioner's plan,
// under the objective it records, before anything uses it.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Pass/PlanLoading.h"

#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
#include "onnx-partition/Partition/io/PlanIO.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

namespace {
bool looksLikeJson(const std::string &S) {
  for (char C : S) {
    if (C == ' ' || C == '\n' || C == '\r' || C == '\t') continue;
    return C == '{';
  }
  return false;
}
} // namespace

Error onnxp::loadPlanInto(PassContext &Ctx, const std::string &File) {
  if (!Ctx.hasGraph)
    return makeUsageError("--load-plan needs a cost graph; include build-cost-graph in --passes");
  Expected<std::string> Text = readFile(File, kMaxModelFileBytes, "a plan (JSON or annotated ONNX model)");
  if (!Text) return Text.takeError();
  // A UTF-8 byte order mark (Windows editors write one) before the JSON
  // (issue 39, item 6: it was "not an ONNX model"); no protobuf starts with
  // 0xEF (wire type 7 does not exist).
  if (Text->rfind("\xEF\xBB\xBF", 0) == 0) Text->erase(0, 3);
  Expected<Plan> P = makeError("unreachable");
  if (looksLikeJson(*Text)) {
    // Issues 21/23: a plan may still name the folded nodes the cost graph
    // left out (named as the cost-graph builder names nodes).
    std::set<std::string> Folded;
    if (Ctx.model && !Ctx.foldedOnnxNodes.empty()) {
      const onnx::GraphProto &OG = Ctx.model->graph();
      std::set<std::string> Used;
      for (int I = 0; I < OG.node_size(); ++I) {
        std::string Name = nodeDisplayName(OG, I);
        if (!Used.insert(Name).second) Used.insert(Name += "#" + std::to_string(I));
        if (std::binary_search(Ctx.foldedOnnxNodes.begin(), Ctx.foldedOnnxNodes.end(), I))
          Folded.insert(Name);
      }
    }
    P = planFromReportJson(*Text, Ctx.graph, Ctx.platform, Folded);
    if (!P) return P.takeError().withContext(File);
  } else {
    if (!Ctx.model)
      return makeUsageError("--load-plan '", File, "' is an ONNX model, but the input is a JSON workload");
    Expected<OnnxModel> Annotated = loadOnnxModel(File, *Text);
    if (!Annotated) return Annotated.takeError();
    P = planFromAnnotatedModel(Annotated->proto, *Ctx.model, Ctx.graph, Ctx.platform);
    if (!P) return P.takeError().withContext(File);
  }
  if (!P) return P.takeError();
  P->accelerators = Ctx.platform.accelerators;
  P->cpus = Ctx.platform.cpus;
  P->notes.push_back("plan loaded from " + File);
  if (Ctx.options.algorithm != kDefaultAlgorithm)
    P->notes.push_back("--algo " + Ctx.options.algorithm + " ignored: the plan comes from --load-plan");
  // Priced under the objective it was made for (recorded in the report and
  // the annotated model), unless the user asks for another one.
  if (Ctx.options.partition.objective) P->objectiveKind = *Ctx.options.partition.objective;
  // Issue 22: the pipeline it runs as, when the user names one (else the
  // report's): in-flight micro-batches count against memory.
  const bool Named = Ctx.options.partition.pipelineSchedule != PipelineScheduleKind::None;
  if (Named) P->pipelineSchedule = Ctx.options.partition.pipelineSchedule;
  if (Ctx.options.partition.iterationMicrobatches > 1 || Named)
    P->iterationMicrobatches = Ctx.options.partition.iterationMicrobatches;
  // Issue 33: the global batch the iteration objectives price: the command
  // line's, else the report's (global_batch).
  if (Ctx.options.partition.globalMicrobatches > 0) setIterationBatch(Ctx.options.partition, *P);
  // The validator reports a partitioner's invalid plan as a bug of ours;
  // a loaded plan that breaks a rule (colocation, a split tied weight,
  // contiguity) is the file's fault, and the user's to fix: the rules
  // finalizePlan checks first, asked here for the rule itself.
  ValidationOptions Structure;
  Structure.checkMemory = false;
  if (Error Rule = brokenPlanRule(Ctx.graph, Ctx.platform, *P, Structure))
    return makeError("--load-plan ", File, ": the plan is invalid for this model: ", Rule.message());
  FinalizeOptions FO;
  FO.memoryIsUsersProblem = true;
  if (Error E = finalizePlan(Ctx.graph, Ctx.platform, *P, FO)) return E.withContext("--load-plan " + File);
  Ctx.plan = std::move(*P);
  return Error::success();
}
