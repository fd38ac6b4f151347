//===- Transforms/ExtractStages.cpp - Annotated model -> stage models ----===//
//
// DESIGN.md, "Facts about the output": every stage becomes a standalone
// valid ONNX model whose inputs and outputs are the tensors crossing its
// boundary. Stage ids are an execution order (Placement.h), so a stage's
// inputs are graph inputs or outputs of lower stages. Boundary tensors need
// types; they come from ONNX shape inference on the whole model, then from
// the caller's fallback (the front end's completed shapes for contrib ops).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ExtractStages.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/SafeShapeInference.h"
#include "onnx-partition/Transforms/OrtLayerAssignment.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/WeightGradientSplit.h"

#include <onnx/shape_inference/implementation.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

using namespace onnxp;
namespace fs = std::filesystem;

std::map<std::string, onnx::TypeProto> onnxp::inferStageTypes(const onnx::ModelProto &M) {
  // External initializers as typed inputs: ONNX cannot read their data.
  onnx::ModelProto Copy = withoutExternalData(M);
  // Issue 39, item 1: ONNX would infer subgraphs without the import's rank
  // checks; types then come from the declared value_info and the fallback.
  if (!subgraphsNeedRankChecks(Copy)) {
    try {
      onnx::ShapeInferenceOptions Options(/*check_type=*/false, /*error_mode=*/0,
                                          /*enable_data_propagation=*/false);
      onnx::shape_inference::InferShapes(Copy, onnx::OpSchemaRegistry::Instance(), Options);
    } catch (const std::exception &) {
      // Types then come from the declared value_info and the fallback.
    }
  }
  std::map<std::string, onnx::TypeProto> Types;
  const onnx::GraphProto &G = Copy.graph();
  for (const auto &T : G.initializer()) {
    onnx::TypeProto TP;
    auto *TT = TP.mutable_tensor_type();
    TT->set_elem_type(T.data_type());
    auto *S = TT->mutable_shape();
    for (int64_t D : T.dims()) S->add_dim()->set_dim_value(D);
    Types[T.name()] = TP;
  }
  for (const auto *List : {&G.value_info(), &G.output(), &G.input()})
    for (const auto &VI : *List)
      if (VI.has_type() && VI.type().value_case() != onnx::TypeProto::VALUE_NOT_SET)
        Types[VI.name()] = VI.type();
  return Types;
}

namespace {
bool typeIsUsable(const onnx::TypeProto &T) {
  if (T.has_tensor_type()) return T.tensor_type().elem_type() != 0;
  return T.value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

/// The value of a tensor an ONNX `Constant` node produces, as an
/// initializer named Name, if it is small (at most kMaxCopiedConstant
/// elements) and held in the node (no external data, no sparse value).
constexpr int64_t kMaxCopiedConstant = 4096;
std::optional<onnx::TensorProto> smallConstant(const onnx::NodeProto &N, const std::string &Name) {
  if (N.op_type() != "Constant" || !(N.domain().empty() || N.domain() == "ai.onnx") || N.input_size() != 0 ||
      N.output_size() != 1 || N.output(0) != Name || N.attribute_size() != 1)
    return std::nullopt;
  const onnx::AttributeProto &A = N.attribute(0);
  onnx::TensorProto T;
  if (A.name() == "value" && A.has_t()) {
    T = A.t();
    if (T.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    int64_t Count = 1;
    for (int64_t D : T.dims()) Count *= D;
    if (Count > kMaxCopiedConstant) return std::nullopt;
  } else if (A.name() == "value_float") {
    T.set_data_type(onnx::TensorProto::FLOAT);
    T.add_float_data(A.f());
  } else if (A.name() == "value_int") {
    T.set_data_type(onnx::TensorProto::INT64);
    T.add_int64_data(A.i());
  } else if (A.name() == "value_floats" && A.floats_size() <= kMaxCopiedConstant) {
    T.set_data_type(onnx::TensorProto::FLOAT);
    T.add_dims(A.floats_size());
    *T.mutable_float_data() = A.floats();
  } else if (A.name() == "value_ints" && A.ints_size() <= kMaxCopiedConstant) {
    T.set_data_type(onnx::TensorProto::INT64);
    T.add_dims(A.ints_size());
    *T.mutable_int64_data() = A.ints();
  } else {
    return std::nullopt;
  }
  T.set_name(Name);
  return T;
}

nlohmann::json shapeJson(const onnx::TypeProto &T) {
  nlohmann::json Dims = nlohmann::json::array();
  if (!T.has_tensor_type() || !T.tensor_type().has_shape()) return nullptr;
  for (const auto &D : T.tensor_type().shape().dim()) {
    if (D.has_dim_value()) Dims.push_back(D.dim_value());
    else if (D.has_dim_param()) Dims.push_back(D.dim_param());
    else Dims.push_back(nullptr);
  }
  return Dims;
}
} // namespace

namespace {
/// Per-stage pipeline.json lists built while the stage model is.
struct StageLists {
  nlohmann::json inputs = nlohmann::json::array();
  nlohmann::json outputs = nlohmann::json::array();
  nlohmann::json constants = nlohmann::json::array();  ///< copied, not received
  nlohmann::json recomputed = nlohmann::json::array(); ///< issue 22: recomputed, not received
  std::vector<std::string> recomputedInputs;           ///< what the recomputed nodes read
};

/// Cuts one annotated model into stage models and pipeline.json. The
/// constructor indexes the whole model once; each step of run() is one
/// member function.
class StageExtractor {
public:
  StageExtractor(const onnx::ModelProto &M, const ModelPlacement &P, const ExtractOptions &O)
      : M(M), G(M.graph()), P(P), O(O), N(G.node_size()), S(P.numStages()) {}

  Expected<StagePipeline> run(const std::vector<InsertedTransfer> &Transfers);

private:
  std::optional<onnx::TypeProto> typeOf(const std::string &Name) const;
  void indexTensors();
  void indexStages();
  Error findReaders();
  nlohmann::json pipelineHeader() const;
  /// Issue 35, item 3: the stage whose backward W stage St was split from
  /// (itself for an all-W stage), or -1 (Transforms/WeightGradientSplit.h).
  int weightGradientsOf(int St) const {
    return St < static_cast<int>(P.weightGradientsOf.size()) ? P.weightGradientsOf[St] : -1;
  }
  /// Device D's CUDA id on its node (-1 for CPUs or an old placement).
  int localId(int D) const {
    return D >= 0 && D < static_cast<int>(P.localDeviceId.size()) ? P.localDeviceId[D] : -1;
  }
  Error extractStage(int St, nlohmann::json &J, StagePipeline &R) const;
  StageModel stageShell(int St) const;
  std::set<std::string> copyNodes(int St, onnx::GraphProto &OG) const;
  void addOldIrInput(const std::string &Name, onnx::GraphProto &OG) const;
  bool copyIn(const std::string &In, onnx::GraphProto &OG, StageLists &L, int Device) const;
  Error addInputs(StageModel &SM, const std::set<std::string> &Produced, StageLists &L,
                  nlohmann::json &Edges) const;
  std::vector<std::string> boundaryOutputs(const std::set<std::string> &Produced) const;
  nlohmann::json outputJson(const std::string &T) const;
  Error addOutputs(StageModel &SM, const std::set<std::string> &Produced, StageLists &L) const;
  void addInternalTypes(const StageModel &SM, const std::set<std::string> &Produced,
                        onnx::GraphProto &OG) const;
  nlohmann::json stageJson(const StageModel &SM, const StageLists &L) const;
  nlohmann::json graphOutputsJson() const;
  nlohmann::json allReduceGroupsJson() const;
  void addReplicaFields(const StageModel &SM, nlohmann::json &Stage) const;

  const onnx::ModelProto &M;
  const onnx::GraphProto &G;
  const ModelPlacement &P;
  const ExtractOptions &O;
  int N, S;
  std::map<std::string, onnx::TypeProto> Types;
  std::unordered_map<std::string, int> Producer;
  std::unordered_map<std::string, const onnx::TensorProto *> Initializers;
  std::unordered_map<std::string, const onnx::SparseTensorProto *> SparseInitializers;
  std::set<std::string> GraphOutputs;
  /// Index of each node among the original (not inserted) nodes, or -1.
  std::vector<int> OriginalIndex;
  std::vector<std::vector<int>> StageNodes;
  /// Tensor -> stages that read it (other than its producer's).
  std::map<std::string, std::set<int>> Readers;
};

/// The type of a boundary tensor: shape inference's, else the fallback's.
std::optional<onnx::TypeProto> StageExtractor::typeOf(const std::string &Name) const {
  auto It = Types.find(Name);
  std::optional<onnx::TypeProto> Fallback = O.fallbackType ? O.fallbackType(Name) : std::nullopt;
  if (It == Types.end() || !typeIsUsable(It->second)) return Fallback;
  // An op whose inference gives only the element type (ORT's
  // MaxPoolGrad: dX has the forward input's shape, which it does not
  // receive) leaves the shape to the front end's completed one.
  const onnx::TypeProto &T = It->second;
  if (Fallback && T.has_tensor_type() && !T.tensor_type().has_shape() && Fallback->has_tensor_type() &&
      Fallback->tensor_type().elem_type() == T.tensor_type().elem_type() &&
      Fallback->tensor_type().has_shape())
    return Fallback;
  return T;
}

/// Producers, initializers and graph outputs by tensor name.
void StageExtractor::indexTensors() {
  for (int I = 0; I < N; ++I)
    for (const std::string &Out : G.node(I).output())
      if (!Out.empty()) Producer[Out] = I;
  for (const auto &T : G.initializer()) Initializers[T.name()] = &T;
  for (const auto &T : G.sparse_initializer()) SparseInitializers[T.values().name()] = &T;
  for (const auto &Out : G.output()) GraphOutputs.insert(Out.name());
}

/// Each stage's nodes, and the original index of each node.
void StageExtractor::indexStages() {
  OriginalIndex.assign(N, -1);
  for (int I = 0, K = 0; I < N; ++I)
    if (!P.inserted[I]) OriginalIndex[I] = K++;
  StageNodes.assign(S, {});
  for (int I = 0; I < N; ++I) StageNodes[P.stage[I]].push_back(I);
}

/// Readers of every tensor that crosses a stage boundary; a read from a
/// later stage breaks the execution order (Placement.h).
Error StageExtractor::findReaders() {
  for (int I = 0; I < N; ++I) {
    std::set<std::string> Seen;
    for (const std::string &In : nodeDataInputs(G.node(I))) {
      if (!Seen.insert(In).second) continue;
      auto It = Producer.find(In);
      int From = It == Producer.end() ? -1 : P.stage[It->second];
      if (From == P.stage[I]) continue;
      if (From > P.stage[I])
        return makeInternalError("stage ", P.stage[I], " reads '", In, "' from the later stage ", From);
      Readers[In].insert(P.stage[I]);
    }
  }
  return Error::success();
}

/// pipeline.json's fields that do not depend on the stages' contents.
nlohmann::json StageExtractor::pipelineHeader() const {
  nlohmann::json J;
  J["format"] = "onnx-partition.pipeline/1";
  J["devices"] = P.deviceNames;
  J["graph_inputs"] = nlohmann::json::array();
  for (const auto &I : G.input()) {
    if (Initializers.count(I.name())) continue; // an overridable initializer, fed from the model
    J["graph_inputs"].push_back({{"name", I.name()},
                                 {"elem_type", I.type().tensor_type().elem_type()},
                                 {"shape", shapeJson(I.type())}});
  }
  // The annotated model in one ONNX Runtime session: its layer_ann values
  // are the used devices' names.
  std::vector<std::string> Used;
  std::vector<int> Local;
  for (int St = 0; St < S; ++St)
    if (P.stageDevice[St] >= 0 &&
        std::find(Used.begin(), Used.end(), P.deviceNames[P.stageDevice[St]]) == Used.end()) {
      Used.push_back(P.deviceNames[P.stageDevice[St]]);
      Local.push_back(localId(P.stageDevice[St]));
    }
  J["ort"] = {{"annotation_key", "layer_ann"},
              {"layer_assignment_settings", ortLayerAssignmentSettings(Used, Local)},
              {"one_session", fitsOneOrtSession(Used)}};
  if (!O.prediction.algorithm.empty())
    J["plan"] = {{"algorithm", O.prediction.algorithm},
                 {"objective_kind", O.prediction.objectiveKind},
                 {"objective", O.prediction.objective},
                 {"time_unit", O.prediction.timeUnit}};
  if (!O.replicatedParameters.empty()) {
    J["replicated_parameters"] = nlohmann::json::array();
    for (const ExtractOptions::ReplicatedParameter &R : O.replicatedParameters) {
      nlohmann::json E = {{"name", R.name}, {"all_reduce_gradient_between", R.devices}};
      // Issue 22, item 4: the stage outputs a runtime sums into the gradient.
      if (!R.gradient.empty()) {
        E["gradient"] = R.gradient;
        E["partials"] = nlohmann::json::object();
        for (const auto &[Dev, T] : R.partials) E["partials"][Dev] = T;
      }
      J["replicated_parameters"].push_back(std::move(E));
    }
  }
  if (!O.pipeline.schedule.empty()) {
    nlohmann::json Devs = nlohmann::json::array();
    for (const ExtractOptions::InFlightDevice &D : O.pipeline.devices)
      Devs.push_back({{"device", D.device},
                      {"stage_position", D.position},
                      {"in_flight_microbatches", D.microbatches},
                      {"peak_memory_bytes", D.peakBytes}});
    J["pipeline"] = {{"schedule", O.pipeline.schedule},
                     {"schedule_named", O.pipeline.named},
                     {"microbatches", O.pipeline.microbatches},
                     {"devices", Devs}};
  }
  if (!P.replicaDevices.empty()) J["allreduce_groups"] = allReduceGroupsJson();
  J["dims"] = nlohmann::json::object();
  for (const auto &[Name, V] : O.dimBindings) J["dims"][Name] = V;
  J["stages"] = nlohmann::json::array();
  J["edges"] = nlohmann::json::array();
  return J;
}

/// A stage model with the whole model's header, functions and metadata,
/// and an empty graph.
StageModel StageExtractor::stageShell(int St) const {
  StageModel SM;
  SM.stage = St;
  SM.device = P.stageDevice[St];
  SM.name = P.stageName(St);
  SM.fileName = SM.name + ".onnx";
  SM.numNodes = StageNodes[St].size();
  onnx::ModelProto &Out = SM.model;
  Out.set_ir_version(M.ir_version());
  *Out.mutable_opset_import() = M.opset_import();
  Out.set_producer_name(M.producer_name());
  Out.set_producer_version(M.producer_version());
  Out.set_domain(M.domain());
  Out.set_model_version(M.model_version());
  const int Of = weightGradientsOf(St);
  Out.set_doc_string(
      "onnx-partition stage " + std::to_string(St) +
      (Of < 0 ? std::string() : " (the weight gradients of stage " + std::to_string(Of) + "'s backward)") +
      " of '" + M.graph().name() + "' on " + P.deviceNames[SM.device]);
  *Out.mutable_functions() = M.functions();
  // Keep the device configuration (field 26) so the stage's node
  // annotations refer to a configuration that exists in the stage model.
  Out.mutable_unknown_fields()->MergeFrom(M.unknown_fields());
  setModelMetadataValue(Out, kStageKey, std::to_string(St));
  setModelMetadataValue(Out, kDeviceKey, P.deviceNames[SM.device]);
  // One file for every replica of the stage: they run the same nodes.
  if (P.replicasOf(SM.device).size() >= 2) setModelMetadataValue(Out, kReplicasKey, P.replicaList(SM.device));
  Out.mutable_graph()->set_name(G.name() + "_" + SM.name);
  return SM;
}

/// Copies stage St's nodes into OG; returns the tensors they produce.
std::set<std::string> StageExtractor::copyNodes(int St, onnx::GraphProto &OG) const {
  std::set<std::string> Produced;
  for (int I : StageNodes[St]) {
    onnx::NodeProto *Node = OG.add_node();
    *Node = G.node(I);
    // An unnamed original node gets the name the cost graph and reports
    // give it (its op and index among the original nodes), so ONNX
    // Runtime's profile of the stage (run_pipeline.js --profile) names
    // it as `onnx-partition --profile` expects.
    if (Node->name().empty() && !P.inserted[I])
      Node->set_name(G.node(I).op_type() + "_" + std::to_string(OriginalIndex[I]));
    // Split off after annotate-placement: the annotations name the stage
    // the node came from.
    if (weightGradientsOf(St) >= 0 && weightGradientsOf(St) != St) setNodeStage(*Node, St);
    for (const std::string &T : G.node(I).output())
      if (!T.empty()) Produced.insert(T);
  }
  return Produced;
}

/// Before IR 4 every initializer must also be a graph input.
void StageExtractor::addOldIrInput(const std::string &Name, onnx::GraphProto &OG) const {
  if (M.ir_version() >= 4) return;
  if (std::optional<onnx::TypeProto> T = typeOf(Name)) {
    auto *VI = OG.add_input();
    VI->set_name(Name);
    *VI->mutable_type() = *T;
  }
}

/// Copies In into the stage if it is an initializer or a small constant
/// (listed in L.constants); false if the stage must receive it.
bool StageExtractor::copyIn(const std::string &In, onnx::GraphProto &OG, StageLists &L, int Device) const {
  if (auto It = Initializers.find(In); It != Initializers.end()) {
    for (const onnx::TensorProto &Init : OG.initializer())
      if (Init.name() == In) return true; // already copied for a recomputed node
    *OG.add_initializer() = *It->second;
    addOldIrInput(In, OG);
    return true;
  }
  if (auto It = SparseInitializers.find(In); It != SparseInitializers.end()) {
    *OG.add_sparse_initializer() = *It->second;
    return true;
  }
  // A small constant from another stage is copied in as an initializer
  // rather than received: ONNX Runtime's LayerNormFusion takes the
  // epsilon only from a constant initializer and otherwise silently
  // uses 1e-5 (onnxruntime/core/optimizer/layer_norm_fusion.cc), so
  // the BERT toy's 1e-12 received as a stage input moved its outputs
  // by 1e-3 with optimizations on (docs/benchmarks-history.md). A Transfer of
  // it stays in the stage and reads the copy.
  auto PIt = Producer.find(In);
  if (PIt == Producer.end()) return false;
  // Issue 22: a weight-derived tensor this device recomputes: its producer
  // goes first in the stage. Its inputs are parameters (initializers, or
  // graph inputs in an ORT training graph): addInputs copies or receives them.
  if (auto RIt = O.recomputed.find(In);
      RIt != O.recomputed.end() && RIt->second.count(P.deviceNames[Device])) {
    const onnx::NodeProto &Node = G.node(PIt->second);
    bool FromParameters = true;
    for (const std::string &NodeIn : Node.input())
      FromParameters &= NodeIn.empty() || Initializers.count(NodeIn) || !Producer.count(NodeIn);
    if (FromParameters) {
      onnx::NodeProto *Copy = OG.add_node();
      *Copy = Node;
      // Annotated as this stage's own nodes are (the first is a template).
      if (OG.node_size() > 1) {
        if (Expected<std::vector<NodeDeviceConfiguration>> C = nodeDeviceConfigurations(OG.node(0)))
          setNodeDeviceConfigurations(*Copy, *C);
        if (Expected<MetadataEntries> Meta = nodeMetadataProps(OG.node(0)))
          setNodeMetadataProps(*Copy, *Meta);
      }
      for (int I = OG.node_size() - 1; I > 0; --I) OG.mutable_node()->SwapElements(I, I - 1);
      for (const std::string &NodeIn : Node.input())
        if (!NodeIn.empty()) L.recomputedInputs.push_back(NodeIn);
      L.recomputed.push_back(In);
      return true;
    }
  }
  std::optional<onnx::TensorProto> C = smallConstant(G.node(PIt->second), In);
  if (!C) return false;
  *OG.add_initializer() = std::move(*C);
  addOldIrInput(In, OG);
  L.constants.push_back(In);
  return true;
}

/// The stage's inputs: every tensor its nodes read and do not produce,
/// copied in or received (then a graph input of the stage and an edge).
Error StageExtractor::addInputs(StageModel &SM, const std::set<std::string> &Produced, StageLists &L,
                                nlohmann::json &Edges) const {
  onnx::GraphProto &OG = *SM.model.mutable_graph();
  std::set<std::string> Added;
  std::vector<std::string> Reads; // grows: a recomputed node's inputs come last
  for (int I : StageNodes[SM.stage])
    for (const std::string &In : nodeDataInputs(G.node(I))) Reads.push_back(In);
  for (size_t K = 0; K < Reads.size(); ++K) {
    const std::string In = Reads[K];
    if (Produced.count(In) || !Added.insert(In).second) continue;
    if (copyIn(In, OG, L, SM.device)) {
      Reads.insert(Reads.end(), L.recomputedInputs.begin(), L.recomputedInputs.end());
      L.recomputedInputs.clear();
      continue;
    }
    std::optional<onnx::TypeProto> T = typeOf(In);
    if (!T)
      return makeError("stage ", SM.name, ": the type of its input '", In,
                       "' is unknown (shape inference could not type it)");
    auto *VI = OG.add_input();
    VI->set_name(In);
    *VI->mutable_type() = *T;
    SM.inputs.push_back(In);
    auto PIt = Producer.find(In);
    nlohmann::json From =
        PIt == Producer.end() ? nlohmann::json("graph") : nlohmann::json(P.stage[PIt->second]);
    L.inputs.push_back({{"tensor", In}, {"from", From}});
    Edges.push_back({{"tensor", In}, {"from", From}, {"to", SM.stage}});
  }
  return Error::success();
}

/// The produced tensors a later stage or the user reads: graph outputs in
/// the model's output order first, then the rest in name order.
std::vector<std::string> StageExtractor::boundaryOutputs(const std::set<std::string> &Produced) const {
  std::vector<std::string> Ordered;
  for (const auto &GO : G.output())
    if (Produced.count(GO.name())) Ordered.push_back(GO.name());
  for (const std::string &T : Produced)
    if (!GraphOutputs.count(T) && Readers.count(T)) Ordered.push_back(T);
  return Ordered;
}

/// pipeline.json's entry for the stage output T.
nlohmann::json StageExtractor::outputJson(const std::string &T) const {
  nlohmann::json To = nlohmann::json::array();
  if (auto RIt = Readers.find(T); RIt != Readers.end())
    for (int Reader : RIt->second) To.push_back(Reader);
  // Readers of a small constant copy it (copyIn) instead of receiving it.
  bool Copied = false;
  if (auto PIt = Producer.find(T); PIt != Producer.end())
    Copied = smallConstant(G.node(PIt->second), T).has_value();
  if (Copied)
    return {{"tensor", T},
            {"to", nlohmann::json::array()},
            {"copied_to", To},
            {"graph_output", GraphOutputs.count(T) > 0}};
  return {{"tensor", T}, {"to", To}, {"graph_output", GraphOutputs.count(T) > 0}};
}

/// The stage's typed outputs.
Error StageExtractor::addOutputs(StageModel &SM, const std::set<std::string> &Produced, StageLists &L) const {
  SM.outputs = boundaryOutputs(Produced);
  onnx::GraphProto &OG = *SM.model.mutable_graph();
  for (const std::string &T : SM.outputs) {
    std::optional<onnx::TypeProto> Ty = typeOf(T);
    if (!Ty)
      return makeError("stage ", SM.name, ": the type of its output '", T,
                       "' is unknown (shape inference could not type it)");
    auto *VI = OG.add_output();
    VI->set_name(T);
    *VI->mutable_type() = *Ty;
    L.outputs.push_back(outputJson(T));
  }
  return Error::success();
}

/// Types of the stage's internal tensors, where shape inference knows them.
void StageExtractor::addInternalTypes(const StageModel &SM, const std::set<std::string> &Produced,
                                      onnx::GraphProto &OG) const {
  std::set<std::string> Boundary(SM.outputs.begin(), SM.outputs.end());
  for (const std::string &T : Produced) {
    if (Boundary.count(T)) continue;
    auto It = Types.find(T);
    if (It == Types.end() || !typeIsUsable(It->second)) continue;
    auto *VI = OG.add_value_info();
    VI->set_name(T);
    *VI->mutable_type() = It->second;
  }
}

/// pipeline.json's entry for a stage: what ONNX Runtime needs to run it
/// on its device, and its boundary tensors.
nlohmann::json StageExtractor::stageJson(const StageModel &SM, const StageLists &L) const {
  // Issue 21: on several nodes, the stage's node and its GPU's id there.
  OrtDevice Ort = ortDeviceFor(P.deviceNames[SM.device], localId(SM.device));
  nlohmann::json Stage = {{"id", SM.stage},
                          {"name", SM.name},
                          {"device", P.deviceNames[SM.device]},
                          {"file", SM.fileName},
                          {"nodes", SM.numNodes},
                          {"execution_provider", Ort.executionProvider},
                          {"device_id", Ort.deviceId},
                          {"layer_assignment_settings",
                           ortLayerAssignmentSettings({P.deviceNames[SM.device]}, {localId(SM.device)})},
                          {"inputs", L.inputs},
                          {"outputs", L.outputs}};
  if (P.multiNode && SM.device < static_cast<int>(P.deviceNode.size()))
    Stage["node"] = P.deviceNode[SM.device];
  // Issue 35, item 3: a runner runs a W stage at its W actions.
  if (const int Of = weightGradientsOf(SM.stage); Of >= 0) {
    Stage["kind"] = "W";
    Stage["weight_gradients_of"] = Of;
  }
  if (!L.constants.empty()) Stage["constants"] = L.constants;
  if (!L.recomputed.empty()) Stage["recomputed"] = L.recomputed;
  if (SM.stage < static_cast<int>(O.prediction.stageTime.size()))
    Stage["predicted_time"] = O.prediction.stageTime[SM.stage];
  addReplicaFields(SM, Stage);
  return Stage;
}

/// An ONNX Runtime training graph sums each parameter's gradient into a
/// buffer with com.microsoft InPlaceAccumulatorV2(buffer, gradient, ...).
bool isGradientAccumulator(const onnx::NodeProto &N) {
  return N.op_type() == "InPlaceAccumulatorV2" && N.domain() == "com.microsoft" && N.input_size() >= 2;
}

/// Issue 33, item 5: pipeline.json's all-reduce groups, one per device
/// whose nodes run as data-parallel replicas, numbered in device order; a
/// group lists its devices (the host first) and the stages it runs.
nlohmann::json StageExtractor::allReduceGroupsJson() const {
  nlohmann::json Groups = nlohmann::json::array();
  for (size_t D = 0; D < P.replicaDevices.size(); ++D) {
    if (P.replicaDevices[D].size() < 2) continue;
    nlohmann::json Devices = nlohmann::json::array(), Stages = nlohmann::json::array();
    for (int R : P.replicaDevices[D]) Devices.push_back(P.deviceNames[R]);
    for (int St = 0; St < S; ++St)
      if (P.stageDevice[St] == static_cast<int>(D)) Stages.push_back(St);
    Groups.push_back({{"id", Groups.size()}, {"devices", Devices}, {"stages", Stages}});
  }
  return Groups;
}

/// Issue 33, item 5: a replicated stage's entry lists its replicas' devices
/// (its own first; every replica runs this one stage file on its share of
/// the micro-batches), its all-reduce group, and in a training graph the
/// gradients the all-reduce sums: those its accumulators make.
void StageExtractor::addReplicaFields(const StageModel &SM, nlohmann::json &Stage) const {
  const std::vector<int> &Replicas = P.replicasOf(SM.device);
  if (Replicas.size() < 2) return;
  nlohmann::json Devices = nlohmann::json::array(), Ids = nlohmann::json::array(),
                 Nodes = nlohmann::json::array();
  for (int R : Replicas) {
    Devices.push_back(P.deviceNames[R]);
    Ids.push_back(ortDeviceFor(P.deviceNames[R], localId(R)).deviceId); // each replica's session
    if (R < static_cast<int>(P.deviceNode.size())) Nodes.push_back(P.deviceNode[R]);
  }
  Stage["replica_devices"] = Devices;
  Stage["replica_device_ids"] = Ids;
  if (P.multiNode) Stage["replica_nodes"] = Nodes;
  int Group = 0;
  for (int D = 0; D < SM.device; ++D) Group += P.replicasOf(D).size() >= 2;
  Stage["allreduce_group"] = Group;
  bool Training = false;
  for (const onnx::NodeProto &N : G.node()) Training |= isGradientAccumulator(N);
  if (!Training) return;
  nlohmann::json Reduced = nlohmann::json::array();
  for (int I : StageNodes[SM.stage])
    if (isGradientAccumulator(G.node(I)))
      Reduced.push_back({{"gradient", G.node(I).input(1)}, {"accumulation_buffer", G.node(I).input(0)}});
  Stage["reduced_gradients"] = Reduced;
}

/// Builds stage St's model into R and its entries into J.
Error StageExtractor::extractStage(int St, nlohmann::json &J, StagePipeline &R) const {
  StageModel SM = stageShell(St);
  onnx::GraphProto &OG = *SM.model.mutable_graph();
  std::set<std::string> Produced = copyNodes(St, OG);
  StageLists L;
  ONNXP_RETURN_IF_ERROR(addInputs(SM, Produced, L, J["edges"]));
  ONNXP_RETURN_IF_ERROR(addOutputs(SM, Produced, L));
  addInternalTypes(SM, Produced, OG);
  if (SM.outputs.empty())
    return makeError("stage ", SM.name, " produces nothing any other stage or the user reads");
  J["stages"].push_back(stageJson(SM, L));
  R.stages.push_back(std::move(SM));
  return Error::success();
}

/// Where each graph output comes from: a stage, an initializer, or the
/// graph inputs.
nlohmann::json StageExtractor::graphOutputsJson() const {
  nlohmann::json Outputs = nlohmann::json::array();
  for (const auto &GO : G.output()) {
    auto PIt = Producer.find(GO.name());
    Outputs.push_back({{"name", GO.name()},
                       {"from", PIt == Producer.end()
                                    ? nlohmann::json(Initializers.count(GO.name()) ? "initializer" : "graph")
                                    : nlohmann::json(P.stage[PIt->second])}});
  }
  return Outputs;
}

nlohmann::json transfersJson(const ModelPlacement &P, const std::vector<InsertedTransfer> &Transfers) {
  nlohmann::json List = nlohmann::json::array();
  for (const InsertedTransfer &T : Transfers)
    List.push_back({{"tensor", T.tensor},
                    {"output", T.output},
                    {"source", P.deviceNames[T.source]},
                    {"target", P.deviceNames[T.target]},
                    {"source_stage", T.sourceStage},
                    {"target_stage", T.targetStage},
                    {"bytes", T.bytes}});
  return List;
}

Expected<StagePipeline> StageExtractor::run(const std::vector<InsertedTransfer> &Transfers) {
  if (P.numNodes() != static_cast<size_t>(N))
    return makeInternalError("placement covers ", P.numNodes(), " nodes, graph has ", N);
  Types = inferStageTypes(M);
  indexTensors();
  indexStages();
  ONNXP_RETURN_IF_ERROR(findReaders());
  StagePipeline R;
  nlohmann::json J = pipelineHeader();
  for (int St = 0; St < S; ++St) ONNXP_RETURN_IF_ERROR(extractStage(St, J, R));
  J["graph_outputs"] = graphOutputsJson();
  J["transfers"] = transfersJson(P, Transfers);
  R.json = J.dump(2) + "\n";
  return R;
}
} // namespace

Expected<StagePipeline> onnxp::extractStages(const onnx::ModelProto &M, const ModelPlacement &P,
                                             const std::vector<InsertedTransfer> &Transfers,
                                             const ExtractOptions &O) {
  return StageExtractor(M, P, O).run(Transfers);
}
