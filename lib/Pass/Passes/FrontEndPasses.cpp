//===- Pass/Passes/FrontEndPasses.cpp - infer-shapes, build-cost-graph, ---===//
//                                       classify-training, derive-backward
//
// The ONNX front end as passes, so --print-after can show the graph after
// each step. Each is a thin shell over a library function that unit tests
// call directly.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Analysis/CostGraphBuilder.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Pass/Passes.h"
#include "onnx-partition/Transforms/StageTypes.h"
#include "onnx-partition/Transforms/VerifyOutput.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>
#include <set>

using namespace onnxp;

namespace {
Error needModel(const PassContext &Ctx, const char *Pass) {
  if (!Ctx.model)
    return makeUsageError("pass '", Pass, "' needs an ONNX model; JSON workloads are already a cost graph");
  return Error::success();
}
Error needGraph(const PassContext &Ctx, const char *Pass) {
  if (!Ctx.hasGraph)
    return makeUsageError("pass '", Pass, "' needs a cost graph; run build-cost-graph first");
  return Error::success();
}

/// A model is written only if the ONNX checker accepts it, and the checker
/// wants a type on every graph output. When inference left one untyped (a
/// node on its path failed, typically because a --dim binding exceeds a size
/// the model fixes, as ort_gpt2_one_layer.onnx's 8 positions), say so now,
/// before the solve, naming the output, the failed node and the bindings,
/// instead of a checker message about the output file after it.
Error checkOutputsTypable(const PassContext &Ctx) {
  const OnnxModel &M = *Ctx.model;
  if (M.untypedOutputs.empty() || (Ctx.options.outputPath.empty() && Ctx.options.stagesDir.empty()))
    return Error::success();
  std::string Why = "no node computes a type for it";
  for (const std::string &N : M.notes)
    if (N.rfind("shape inference failed", 0) == 0) Why = N;
  std::string Dims;
  for (const auto &[Name, Value] : M.dimBindings)
    Dims += (Dims.empty() ? "" : ", ") + Name + "=" + std::to_string(Value);
  return makeError(M.path, ": graph output '", M.untypedOutputs.front(), "'",
                   M.untypedOutputs.size() > 1
                       ? " (and " + std::to_string(M.untypedOutputs.size() - 1) + " more)"
                       : std::string(),
                   " has no type, which the ONNX checker requires of a written model: ", Why,
                   Dims.empty() ? std::string("")
                                : "; check the bindings (" + Dims + ") against the sizes the model fixes");
}

/// Issue 20: a --dim NAME that no dimension of the model uses was ignored
/// silently (a typo, or a binding meant for another model): a usage error
/// naming the dims the model has.
Error checkDimBindingsUsed(const OnnxModel &M, const std::map<std::string, int64_t> &Bindings) {
  if (Bindings.empty()) return Error::success();
  std::set<std::string> Names;
  auto Scan = [&](const auto &Values) {
    for (const onnx::ValueInfoProto &V : Values) {
      if (!V.type().has_tensor_type() || !V.type().tensor_type().has_shape()) continue;
      for (const auto &D : V.type().tensor_type().shape().dim()) {
        if (!D.has_dim_param()) continue;
        // A dim may be an expression ("batch*2"): every identifier in it.
        const std::string &P = D.dim_param();
        for (size_t I = 0; I < P.size();) {
          if (std::isalpha((unsigned char)P[I]) || P[I] == '_') {
            size_t J = I;
            while (J < P.size() && (std::isalnum((unsigned char)P[J]) || P[J] == '_' || P[J] == '.')) ++J;
            Names.insert(P.substr(I, J - I));
            I = J;
          } else {
            ++I;
          }
        }
        Names.insert(P);
      }
    }
  };
  const onnx::GraphProto &G = M.proto.graph();
  Scan(G.input());
  Scan(G.output());
  Scan(G.value_info());
  for (const auto &[Name, Value] : Bindings) {
    if (Names.count(Name)) continue;
    std::string Have;
    for (const std::string &N : Names) Have += (Have.empty() ? "" : ", ") + N;
    return makeUsageError("--dim ", Name, "=", Value, " matches no dimension of '", M.path, "'",
                          Have.empty() ? std::string("; it has no symbolic dimensions")
                                       : "; its symbolic dimensions are: " + Have);
  }
  return Error::success();
}

class InferShapesPass final : public Pass {
public:
  const char *name() const override { return "infer-shapes"; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needModel(Ctx, name()));
    ONNXP_RETURN_IF_ERROR(checkDimBindingsUsed(*Ctx.model, Ctx.options.dimBindings));
    Ctx.model->dimBindings = Ctx.options.dimBindings;
    ONNXP_RETURN_IF_ERROR(inferShapes(*Ctx.model));
    for (const std::string &N : Ctx.model->notes)
      if (std::find(Ctx.notes.begin(), Ctx.notes.end(), N) == Ctx.notes.end()) Ctx.notes.push_back(N);
    ONNXP_RETURN_IF_ERROR(checkOutputsTypable(Ctx));
    // Issue 20: a model the ONNX checker rejects cannot be written; say so
    // now, before planning, not after the solve (verify-output said it).
    // A structural fault (a cycle, a dangling input) is build-cost-graph's
    // to name, more precisely than the checker does.
    if ((!Ctx.options.outputPath.empty() || !Ctx.options.stagesDir.empty()) &&
        !checkGraphStructure(*Ctx.model))
      ONNXP_RETURN_IF_ERROR(checkInputModel(Ctx.model->proto, Ctx.model->path));
    Ctx.count(name(), "Number of tensors with unknown shape", Ctx.model->unknownShapeTensors.size());
    Ctx.count(name(), "Number of unbound symbolic dims", Ctx.model->unboundDims.size());
    return true;
  }
};

class BuildCostGraphPass final : public Pass {
public:
  const char *name() const override { return "build-cost-graph"; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needModel(Ctx, name()));
    Expected<CostGraph> G = buildCostGraph(*Ctx.model);
    if (!G) return G.takeError();
    Ctx.graph = std::move(*G);
    Ctx.hasGraph = true;
    Ctx.costed = false;
    Ctx.count(name(), "Number of cost nodes", Ctx.graph.numNodes());
    Ctx.count(name(), "Number of cost edges", Ctx.graph.numEdges());
    return true;
  }
};

/// The tensors of the edges Pick selects keep their producer and readers on
/// one device: their classes are joined. Returns how many distinct tensors
/// and the first with its producer ("Op 'name'"), or 0 when none.
struct JoinedTensors {
  size_t count = 0;
  std::string first, producer;
};
JoinedTensors colocateTensors(CostGraph &G, const std::function<bool(const std::string &)> &Pick) {
  std::vector<int> Parent(G.numClasses());
  std::iota(Parent.begin(), Parent.end(), 0);
  auto Find = [&](int X) {
    while (Parent[X] != X) X = Parent[X] = Parent[Parent[X]];
    return X;
  };
  std::set<std::string> Picked;
  JoinedTensors J;
  for (const CostEdge &E : G.edges()) {
    if (E.tensor.empty() || !Pick(E.tensor)) continue;
    if (Picked.insert(E.tensor).second && J.first.empty()) {
      J.first = E.tensor;
      J.producer = G.node(E.src).op + " '" + G.node(E.src).name + "'";
    }
    Parent[Find(G.classOf(E.src))] = Find(G.classOf(E.dst));
  }
  J.count = Picked.size();
  if (!J.count) return J;
  for (size_t V = 0; V < G.numNodes(); ++V) G.node(V).colocClass = Find(G.classOf(V));
  G.normalizeClasses();
  return J;
}

/// Issue 20: a stage boundary needs the type of the tensor crossing it
/// (ExtractStages), and a model with deprecated or unknown ops (an op of an
/// unknown domain fed by no typed tensor) can leave a tensor with no
/// element type that no schema implies either. Under --emit-stages, say so
/// before planning and keep such a tensor's producer and readers on one
/// device (one colocation class), so that no contiguous plan cuts there (a
/// plan that leaves the device and comes back still makes two stages of
/// it). Returns the note, or "" when every edge's tensor has a type.
std::string colocateUntypedTensors(CostGraph &G, const OnnxModel &M) {
  JoinedTensors J = colocateTensors(G, [&](const std::string &Name) {
    const TensorInfo *T = M.tensor(Name);
    return (!T || T->elemType == 0) && !M.nonTensorValues.count(Name);
  });
  if (!J.count) return "";
  return "--emit-stages: " + std::to_string(J.count) + " tensor(s) have no known type (first: '" + J.first +
         "', made by " + J.producer +
         "); a stage cannot be cut there, so each stays on its producer's device with its readers";
}

/// Issue 37 (the public-model study: an opset-12 SequenceInsert chain cut
/// in two): a Transfer is an Identity, which takes tensors only below
/// opset 14, and a stage boundary is a tensor the runner feeds. A sequence,
/// map or optional value therefore stays on its producer's device with its
/// readers, with or without --emit-stages. Returns the note, or "".
std::string colocateNonTensorValues(CostGraph &G, const OnnxModel &M) {
  if (M.nonTensorValues.empty()) return "";
  JoinedTensors J =
      colocateTensors(G, [&](const std::string &Name) { return M.nonTensorValues.count(Name) > 0; });
  if (!J.count) return "";
  return std::to_string(J.count) + " value(s) are sequences, maps or optionals, not tensors (first: '" +
         J.first + "', made by " + J.producer +
         "); a Transfer and a stage boundary carry tensors only, so each stays on its producer's device with "
         "its readers";
}

class ClassifyTrainingPass final : public Pass {
public:
  const char *name() const override { return "classify-training"; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needModel(Ctx, name()));
    ONNXP_RETURN_IF_ERROR(needGraph(Ctx, name()));
    size_t Multi = classifyTrainingGraph(Ctx.graph, *Ctx.model, Ctx.options.splitStatelessBackward);
    if (std::string Note = colocateNonTensorValues(Ctx.graph, *Ctx.model); !Note.empty())
      Ctx.notes.push_back(Note);
    if (!Ctx.options.stagesDir.empty()) {
      // Issue 20: element types the op schemas imply first (StageTypes.h);
      // what stays untyped is kept off every stage boundary.
      completeElemTypesFromSchemas(*Ctx.model);
      if (std::string Note = colocateUntypedTensors(Ctx.graph, *Ctx.model); !Note.empty())
        Ctx.notes.push_back(Note);
    }
    Ctx.count(name(), "Number of backward nodes", Ctx.graph.countRole(Role::Backward));
    Ctx.count(name(), "Number of optimizer nodes", Ctx.graph.countRole(Role::Optimizer));
    Ctx.count(name(), "Number of colocation classes with more than one node", Multi);
    Ctx.count(name(), "Number of shared parameters (readers in several classes; issue 22)",
              Ctx.graph.sharedParameters.size());
    return true;
  }
};

class DeriveBackwardPass final : public Pass {
public:
  const char *name() const override { return "derive-backward"; }
  Expected<bool> run(PassContext &Ctx) override {
    ONNXP_RETURN_IF_ERROR(needGraph(Ctx, name()));
    if (Ctx.graph.isTraining()) {
      Ctx.notes.push_back("the model is already a training graph; --training derived nothing");
      return false;
    }
    size_t Added = deriveBackward(Ctx.graph);
    Ctx.costed = false;
    Ctx.count(name(), "Number of derived backward nodes", Added);
    Ctx.notes.push_back("derived " + std::to_string(Added) +
                        " backward nodes from the forward graph (--training)");
    return Added > 0;
  }
};
} // namespace

std::unique_ptr<Pass> onnxp::createInferShapesPass() { return std::make_unique<InferShapesPass>(); }
std::unique_ptr<Pass> onnxp::createBuildCostGraphPass() { return std::make_unique<BuildCostGraphPass>(); }
std::unique_ptr<Pass> onnxp::createClassifyTrainingPass() { return std::make_unique<ClassifyTrainingPass>(); }
std::unique_ptr<Pass> onnxp::createDeriveBackwardPass() { return std::make_unique<DeriveBackwardPass>(); }
