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

#include "onnx-partition/Partition/eval/FinalizePlan.h"
#include "onnx-partition/Partition/io/PlanIO.h"
#include "onnx-partition/Partition/eval/PlanValidator.h"
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
  // The objective and memory model the plan was made for, so it is priced
  // the same way again (older reports without them: max-load, sum).
  if (J.contains("objective_kind") && J["objective_kind"].is_string()) {
    std::optional<Objective> O = parseObjective(J["objective_kind"].get<std::string>());
    if (!O) return makeError(File, ": unknown objective_kind '", J["objective_kind"].get<std::string>(), "'");
    P.objectiveKind = *O;
  }
  if (J.contains("memory_model") && J["memory_model"].is_string()) {
    std::optional<MemoryModel> M = parseMemoryModel(J["memory_model"].get<std::string>());
    if (!M) return makeError(File, ": unknown memory_model '", J["memory_model"].get<std::string>(), "'");
    P.memoryModel = *M;
  }
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
    if (A.contains("stage") && A["stage"].is_number_integer()) P.stage[It->second] = A["stage"].get<int>();
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
  // Priced under the objective it was made for (recorded in the report and
  // the annotated model), unless the user asks for another one.
  if (Ctx.options.partition.objective) P->objectiveKind = *Ctx.options.partition.objective;
  FinalizeOptions FO;
  FO.memoryIsUsersProblem = true;
  ONNXP_RETURN_IF_ERROR(finalizePlan(Ctx.graph, Ctx.platform, *P, FO).withContext("--load-plan " + File));
  Ctx.plan = std::move(*P);
  return Error::success();
}
