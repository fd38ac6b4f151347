//===- tools/onnx-partition/PlanLoading.cpp - --load-plan ----------------===//
//
// A plan can come back from three kinds of files, told apart by content: an
// ONNX model written by -o (its annotations are the plan, ReadPlacement.h),
// a JSON plan in the --report format ("assignment": [{node, device,
// stage?}]), or the seed 004 reference code's split JSON ({"cpus": [...],
// "fpgas": [...]}, read by Partition/PlanIO.h). Either way the plan must belong to this model -- every node
// named, no unknown node -- and it goes through the same validation and
// pricing as a partitioner's plan before anything uses it.
//
//===----------------------------------------------------------------------===//
#include "WriteBack.h"

#include "onnx-partition/Partition/PlanEvaluator.h"
#include "onnx-partition/Partition/PlanIO.h"
#include "onnx-partition/Partition/PlanValidator.h"
#include "onnx-partition/Support/FileIO.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <nlohmann/json.hpp>

#include <map>

using namespace onnxp;
using namespace onnxp::tool;

namespace {
bool looksLikeJson(const std::string &S) {
  for (char C : S) {
    if (C == ' ' || C == '\n' || C == '\r' || C == '\t') continue;
    return C == '{';
  }
  return false;
}

Expected<Plan> planFromJson(const std::string &File, const std::string &Text, const CostGraph &G,
                            const Platform &Pl) {
  nlohmann::json J = nlohmann::json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) return makeError(File, ": not a JSON object");
  if (!J.contains("assignment") && (J.contains("fpgas") || J.contains("cpus"))) {
    Expected<Plan> Split = planFromSplitJson(Text, G, Pl);
    if (!Split) return Split.takeError().withContext(File);
    return Split;
  }
  if (!J.contains("assignment") || !J["assignment"].is_array())
    return makeError(File, ": not a plan: no \"assignment\" list of {node, device} (the --report format) "
                           "and no \"fpgas\"/\"cpus\" split (the reference code's format)");
  std::map<std::string, int> NodeIndex;
  for (size_t V = 0; V < G.numNodes(); ++V) NodeIndex[G.node(V).name] = static_cast<int>(V);
  Plan P;
  P.algorithm = J.contains("algorithm") && J["algorithm"].is_string() ? J["algorithm"].get<std::string>()
                                                                       : "loaded";
  P.device.assign(G.numNodes(), -1);
  P.stage.assign(G.numNodes(), -1);
  for (const auto &A : J["assignment"]) {
    if (!A.is_object() || !A.contains("node") || !A["node"].is_string() || !A.contains("device") ||
        !A["device"].is_string())
      return makeError(File, ": an assignment entry lacks \"node\" or \"device\"");
    std::string Node = A["node"].get<std::string>();
    auto It = NodeIndex.find(Node);
    if (It == NodeIndex.end())
      return makeError(File, ": the plan is for a different model: node '", Node, "' is not in this model");
    int D = Pl.deviceIndex(A["device"].get<std::string>());
    if (D < 0)
      return makeError(File, ": node '", Node, "' is placed on ", A["device"].get<std::string>(),
                       ", which this platform lacks (", Pl.accelerators, " accelerators, ", Pl.cpus,
                       " CPUs; see --devices/--cpus)");
    if (P.device[It->second] >= 0) return makeError(File, ": node '", Node, "' is placed twice");
    P.device[It->second] = D;
    if (A.contains("stage") && A["stage"].is_number_integer()) {
      // A stage number sizes per-stage arrays later: at most one per node.
      int64_t S = A["stage"].get<int64_t>();
      if (S < 0 || S >= static_cast<int64_t>(G.numNodes()))
        return makeError(File, ": node '", Node, "' has stage ", A["stage"].dump(), "; stages are 0 to ",
                         G.numNodes() - 1);
      P.stage[It->second] = static_cast<int>(S);
    }
  }
  for (size_t V = 0; V < G.numNodes(); ++V)
    if (P.device[V] < 0) return makeError(File, ": the plan does not cover node '", G.node(V).name, "'");
  for (int S : P.stage)
    if (S < 0) {
      P.stage.clear();
      break;
    }
  return P;
}
} // namespace

Error onnxp::tool::applyLoadedPlan(PassContext &Ctx, const std::string &File) {
  if (!Ctx.hasGraph) return makeUsageError("--load-plan needs a cost graph; include build-cost-graph in --passes");
  Expected<std::string> Text = readFile(File);
  if (!Text) return Text.takeError();
  Expected<Plan> P = makeError("unreachable");
  if (looksLikeJson(*Text)) {
    P = planFromJson(File, *Text, Ctx.graph, Ctx.platform);
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
  if (Ctx.options.algorithm != "single")
    P->notes.push_back("--algo " + Ctx.options.algorithm + " ignored: the plan comes from --load-plan");
  ONNXP_RETURN_IF_ERROR(validatePlan(Ctx.graph, Ctx.platform, *P).withContext("--load-plan " + File));
  P->objectiveKind = Ctx.options.partition.objective;
  ONNXP_RETURN_IF_ERROR(evaluateInto(Ctx.graph, Ctx.platform, *P, P->objectiveKind));
  Ctx.plan = std::move(*P);
  return Error::success();
}
