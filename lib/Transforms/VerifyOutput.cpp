//===- Transforms/VerifyOutput.cpp - Checker + writer invariants ---------===//
//
// The checks mirror onnx/optimizer's test harness (_optimized(): check the
// model before and after) and ONNX Runtime's rule that a transformer never
// renames the model's interface (STYLE.md §3, §4). A failure here is a bug
// in the writer, reported as an internal error rather than written out.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/VerifyOutput.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/IR/IrVersion.h"
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/OrtSchemas.h"
#include "onnx-partition/IR/SafeShapeInference.h"
#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/PlacementFields.h"
#include "onnx-partition/Transforms/ReadPlacement.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

using namespace onnxp;

namespace {
/// ONNX's messages span lines ("...\n\n==> Context: Bad node spec ...");
/// an error is one line.
std::string oneLine(std::string S) {
  for (char &C : S)
    if (C == '\n' || C == '\r') C = ' ';
  std::string Out;
  for (char C : S)
    if (!(C == ' ' && !Out.empty() && Out.back() == ' ')) Out += C;
  while (!Out.empty() && Out.back() == ' ') Out.pop_back();
  return Out;
}

/// The 1.12 checker says "Field 'type' of 'value_info' is required" without
/// the name; name the graph input or output instead.
Error checkInterfaceTyped(const onnx::GraphProto &G, const std::string &What) {
  for (const auto &VI : G.input())
    if (!VI.has_type())
      return makeError(What, ": graph input '", VI.name(), "' has no type (the ONNX checker requires one)");
  for (const auto &VI : G.output())
    if (!VI.has_type())
      return makeError(What, ": graph output '", VI.name(), "' has no type (the ONNX checker requires one)");
  return Error::success();
}

/// Whether T is a map or holds one (seq(map(...)), optional(map(...))).
bool holdsMap(const onnx::TypeProto &T) {
  if (T.has_map_type()) return true;
  if (T.has_sequence_type()) return holdsMap(T.sequence_type().elem_type());
  if (T.has_optional_type()) return holdsMap(T.optional_type().elem_type());
  return false;
}

/// ONNX 1.12's strict inference cannot merge a map type into the value it
/// types ("type case unsupported for symbolic shape inference. inferred=5";
/// later ONNX versions can), whether or not one is declared, and so fails
/// every model with a ZipMap (seq(map)) output, which ONNX Runtime runs
/// (issue 37's study: a scikit-learn classifier). The copy strict inference
/// checks leaves out the ZipMaps nothing reads and the map declarations;
/// the checker above has checked them already.
void dropMapProducers(onnx::GraphProto &G) {
  std::set<std::string> Read;
  for (const auto &N : G.node())
    for (const std::string &In : N.input()) Read.insert(In);
  std::set<std::string> Dropped;
  auto *Nodes = G.mutable_node();
  for (int I = Nodes->size() - 1; I >= 0; --I) {
    const onnx::NodeProto &N = Nodes->Get(I);
    if (N.op_type() != "ZipMap" || N.domain() != "ai.onnx.ml" || N.output_size() != 1 ||
        Read.count(N.output(0)))
      continue;
    Dropped.insert(N.output(0));
    Nodes->DeleteSubrange(I, 1);
  }
  for (auto *List : {G.mutable_output(), G.mutable_value_info()})
    for (int I = List->size() - 1; I >= 0; --I)
      if (Dropped.count(List->Get(I).name()) || holdsMap(List->Get(I).type())) List->DeleteSubrange(I, 1);
}
} // namespace

Error onnxp::checkModelFull(const onnx::ModelProto &M, const std::string &What) {
  registerOrtOnnxDomainSchemas();
  ONNXP_RETURN_IF_ERROR(checkInterfaceTyped(M.graph(), What));
  // ONNX 1.12 resolves external locations against the current directory and
  // cannot infer through external tensors: both see them as graph inputs;
  // the writer checks the references against the output's folder itself
  // (checkWrittenReferences).
  // Issue 37: IR 9-11 checked at IR 8 when nothing newer is used.
  Expected<onnx::ModelProto> Lowered = forIrChecker(withoutExternalData(M), What);
  if (!Lowered) return Lowered.takeError();
  onnx::ModelProto Checked = std::move(*Lowered);
  // A stage's boundary tensor can have an unknown rank (its shape depends on
  // absent external data); ONNX Runtime takes such an input or output, the
  // 1.12 checker insists on a shape field. It sees an empty one; inference
  // below runs without it.
  onnx::ModelProto ForChecker = Checked;
  for (auto *List :
       {ForChecker.mutable_graph()->mutable_input(), ForChecker.mutable_graph()->mutable_output()})
    for (auto &VI : *List)
      if (VI.type().has_tensor_type() && !VI.type().tensor_type().has_shape())
        VI.mutable_type()->mutable_tensor_type()->mutable_shape();
  try {
    onnx::checker::check_model(ForChecker);
  } catch (const std::exception &Ex) { return makeError(What, ": ONNX checker: ", oneLine(Ex.what())); }
  // ONNX infers subgraphs and functions without the rank checks the import
  // ran on the main graph (SafeShapeInference.h): such a model keeps the
  // checker's verdict alone rather than crash here.
  if (subgraphsNeedRankChecks(Checked)) return Error::success();
  try {
    onnx::ModelProto Copy = Checked;
    dropMapProducers(*Copy.mutable_graph());
    onnx::ShapeInferenceOptions Options(/*check_type=*/true, /*error_mode=*/1,
                                        /*enable_data_propagation=*/false);
    onnx::shape_inference::InferShapes(Copy, onnx::OpSchemaRegistry::Instance(), Options);
  } catch (const std::exception &Ex) {
    return makeError(What, ": ONNX shape inference (strict): ", oneLine(Ex.what()));
  }
  return Error::success();
}

Error onnxp::checkInputModel(const onnx::ModelProto &Input, const std::string &InputPath) {
  Error Whole = checkModelFull(Input, InputPath);
  if (!Whole) return Whole;
  // An IR version the checker cannot take is the whole story (IrVersion.h).
  if (Error Ir = checkIrVersion(Input, InputPath)) return Ir;
  std::string Prefix = InputPath + ": ";
  std::string Why =
      Whole.message().rfind(Prefix, 0) == 0 ? Whole.message().substr(Prefix.size()) : Whole.message();
  // Name the first node the checker rejects on its own (check_model only
  // says "Name: <empty> OpType: Relu" for unnamed nodes).
  const onnx::ModelProto Local = withoutExternalData(Input);
  const onnx::GraphProto &G = Local.graph();
  onnx::checker::CheckerContext Ctx;
  Ctx.set_ir_version(std::min(static_cast<int>(Input.ir_version()), checkerIrVersion()));
  std::unordered_map<std::string, int> Opsets;
  for (const auto &O : Input.opset_import()) Opsets[O.domain()] = static_cast<int>(O.version());
  Ctx.set_opset_imports(Opsets);
  Ctx.set_schema_registry(onnx::OpSchemaRegistry::Instance());
  onnx::checker::LexicalScopeContext Scope;
  for (const auto &VI : G.input()) Scope.add(VI.name());
  for (const auto &T : G.initializer()) Scope.add(T.name());
  for (int I = 0; I < G.node_size(); ++I) {
    try {
      onnx::checker::check_node(G.node(I), Ctx, Scope);
    } catch (const std::exception &Ex) {
      return makeError(InputPath, ": node '", nodeDisplayName(G, I), "' (", G.node(I).op_type(),
                       "): the input model fails the ONNX checker, so no model written from it can pass: ",
                       oneLine(Ex.what()));
    }
    for (const std::string &O : G.node(I).output())
      if (!O.empty()) Scope.add(O);
  }
  return makeError(InputPath,
                   ": the input model fails the ONNX checker, so no model written from it can pass: ", Why);
}

namespace {
template <typename List> std::vector<std::string> namesOf(const List &L) {
  std::vector<std::string> Out;
  for (const auto &X : L) Out.push_back(X.name());
  return Out;
}

std::string stringAttr(const onnx::NodeProto &N, const std::string &Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return A.s();
  return "";
}

/// The graph's interface kept: inputs, outputs (with the sink copies'
/// partial gradients after them), initializers, IR version and opsets.
Error checkInterface(const onnx::ModelProto &Original, const onnx::ModelProto &Out) {
  const onnx::GraphProto &OG = Original.graph();
  const onnx::GraphProto &G = Out.graph();
  // Issue 22, item 4: the partial gradients of sink copies (SinkCopies.h)
  // follow the original outputs.
  std::vector<std::string> Outputs = namesOf(G.output());
  while (Outputs.size() > static_cast<size_t>(OG.output_size()) &&
         Outputs.back().find(kPartialTag) != std::string::npos)
    Outputs.pop_back();
  if (namesOf(OG.input()) != namesOf(G.input()) || namesOf(OG.output()) != Outputs ||
      namesOf(OG.initializer()) != namesOf(G.initializer()))
    return makeInternalError("the written model changed the graph's inputs, outputs or initializers");
  bool HasFunctions = false;
  for (const auto &F : Out.functions()) HasFunctions |= F.domain() == kPartitionDomain;
  if (Out.ir_version() != Original.ir_version() &&
      !(HasFunctions && Original.ir_version() < kMinIrVersionForFunctions &&
        Out.ir_version() == kMinIrVersionForFunctions))
    return makeInternalError("ir_version changed from ", Original.ir_version(), " to ", Out.ir_version());
  for (const auto &Imp : Original.opset_import()) {
    bool Kept = false;
    for (const auto &O : Out.opset_import())
      Kept |= O.domain() == Imp.domain() && O.version() == Imp.version();
    if (!Kept)
      return makeInternalError("opset import '", Imp.domain(), "' version ", Imp.version(), " was not kept");
  }
  return Error::success();
}

/// Whether tensor Name of G reaches a tensor Wanted accepts through
/// inserted identities and copies of the original producer.
template <typename WantedFn>
bool readsTheOriginal(const onnx::GraphProto &G, const std::unordered_map<std::string, int> &Producer,
                      std::string Name, const WantedFn &Wanted) {
  // What the node reads instead: a chain of inserted identities
  // (Transfer, Offload, Prefetch) and recomputed copies of the
  // original producer (Transforms/Recompute.h), back to the original.
  bool Reaches = false;
  for (int Step = 0; Step < 64 && !Reaches; ++Step) {
    auto It = Producer.find(Name);
    const onnx::NodeProto *T = It == Producer.end() ? nullptr : &G.node(It->second);
    if (!T) break;
    // A copy of the original producer with the same op: a recomputation
    // (Recompute.h) or an earlier sink's copy on this device (SinkCopies.h).
    const char *SameOpTag = nullptr;
    for (const char *Tag : {kRecomputeNameTag, kSinkCopyTag})
      if (T->name().find(Tag) != std::string::npos && Name.rfind(Tag) != std::string::npos) SameOpTag = Tag;
    if (T->domain() == kPartitionDomain && T->input_size() == 1) {
      Name = T->input(0);
    } else if (SameOpTag) {
      std::string Orig = Name.substr(0, Name.rfind(SameOpTag));
      auto OP = Producer.find(Orig);
      if (OP == Producer.end() || G.node(OP->second).op_type() != T->op_type()) break;
      Name = Orig;
    } else if (T->name().find(kFoldedCopyTag) != std::string::npos &&
               Name.rfind(kFoldedCopyTag) != std::string::npos) {
      // A folded node's copy on the reader's device (FoldedCopies.h); a
      // Shape's copy is the Constant ORT folds it to.
      std::string Orig = Name.substr(0, Name.rfind(kFoldedCopyTag));
      auto OP = Producer.find(Orig);
      if (OP == Producer.end()) break;
      const std::string &OrigOp = G.node(OP->second).op_type();
      if (OrigOp != T->op_type() && !(OrigOp == "Shape" && T->op_type() == "Constant")) break;
      Name = Orig;
    } else {
      break;
    }
    Reaches = Wanted(Name);
  }
  return Reaches;
}

/// Original node K kept as it was in G, reading its inputs or what they
/// became.
Error checkOriginalNode(const onnx::GraphProto &OG, const onnx::GraphProto &G, const AnnotatedPlacement &R,
                        int K, const std::unordered_map<std::string, int> &Producer) {
  const onnx::NodeProto &A = OG.node(K);
  const onnx::NodeProto &B = G.node(R.originalNodes[K]);
  std::string Where = "node '" + (A.name().empty() ? A.op_type() + "_" + std::to_string(K) : A.name()) + "'";
  // A Sum that is a replicated parameter's sink reads only its device's
  // partial gradients (SinkCopies.h): some of its inputs, in order.
  const bool Dropped = A.op_type() == "Sum" && B.input_size() < A.input_size() && B.input_size() > 0;
  if (A.op_type() != B.op_type() || A.domain() != B.domain() || A.name() != B.name() ||
      A.output_size() != B.output_size() || (A.input_size() != B.input_size() && !Dropped))
    return makeInternalError(Where, " changed in the written model");
  for (int J = 0; J < A.output_size(); ++J)
    if (A.output(J) != B.output(J)) return makeInternalError(Where, ": output ", J, " was renamed");
  const std::set<std::string> AInputs(A.input().begin(), A.input().end());
  for (int J = 0; J < B.input_size(); ++J) {
    auto Wanted = [&](const std::string &Name) {
      return Dropped ? AInputs.count(Name) > 0 : Name == A.input(J);
    };
    if (Wanted(B.input(J))) continue;
    if (!readsTheOriginal(G, Producer, B.input(J), Wanted))
      return makeInternalError(Where, ": input ", J, " reads '", B.input(J), "' instead of '",
                               Dropped ? std::string("one of its inputs") : A.input(J),
                               "', a transfer or a recomputation of it");
  }
  return Error::success();
}

/// Every cross-device read goes through a Transfer that names its devices.
Error checkTransfers(const onnx::GraphProto &G, const ModelPlacement &P,
                     const std::unordered_map<std::string, int> &Producer) {
  for (int J = 0; J < G.node_size(); ++J) {
    const onnx::NodeProto &N = G.node(J);
    for (const std::string &In : nodeDataInputs(N)) {
      auto It = Producer.find(In);
      if (It == Producer.end() || P.device[It->second] == P.device[J]) continue;
      if (N.domain() != kPartitionDomain || N.op_type() != partitionOpName(PartitionOp::Transfer))
        return makeInternalError("node '", N.name().empty() ? N.op_type() : N.name(), "' on ",
                                 P.deviceNames[P.device[J]], " reads '", In, "' from ",
                                 P.deviceNames[P.device[It->second]], " without a Transfer");
      if (stringAttr(N, "source") != P.deviceNames[P.device[It->second]] ||
          stringAttr(N, "target") != P.deviceNames[P.device[J]])
        return makeInternalError("Transfer '", N.name(), "' says ", stringAttr(N, "source"), " -> ",
                                 stringAttr(N, "target"), " but moves '", In, "' from ",
                                 P.deviceNames[P.device[It->second]], " to ", P.deviceNames[P.device[J]]);
    }
  }
  return Error::success();
}
} // namespace

Error onnxp::verifyPartitionedModel(const onnx::ModelProto &Original, const onnx::ModelProto &Out) {
  const onnx::GraphProto &OG = Original.graph();
  const onnx::GraphProto &G = Out.graph();
  ONNXP_RETURN_IF_ERROR(checkInterface(Original, Out));

  Expected<AnnotatedPlacement> R = readPlacement(Out);
  if (!R) return R.takeError().withContext("annotations");
  const ModelPlacement &P = R->placement;
  if (R->originalNodes.size() != static_cast<size_t>(OG.node_size()))
    return makeInternalError("the written model has ", R->originalNodes.size(), " original nodes, the input ",
                             OG.node_size());

  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &T : G.node(I).output())
      if (!T.empty()) Producer[T] = I;
  for (int K = 0; K < OG.node_size(); ++K) ONNXP_RETURN_IF_ERROR(checkOriginalNode(OG, G, *R, K, Producer));
  return checkTransfers(G, P, Producer);
}

Error onnxp::verifyStageModel(const onnx::ModelProto &Stage, int StageId, const std::string &DeviceName) {
  std::string What = "stage " + std::to_string(StageId) + " (" + DeviceName + ")";
  Expected<AnnotatedPlacement> R = readPlacement(Stage);
  if (!R) return R.takeError().withContext(What);
  const ModelPlacement &P = R->placement;
  const onnx::GraphProto &G = Stage.graph();
  std::set<std::string> Available;
  for (const auto &I : G.input()) Available.insert(I.name());
  for (const auto &I : G.initializer()) Available.insert(I.name());
  for (const auto &I : G.sparse_initializer()) Available.insert(I.values().name());
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    if (P.stage[I] != StageId || P.deviceNames[P.device[I]] != DeviceName)
      return makeInternalError(What, ": node '", N.name().empty() ? N.op_type() : N.name(), "' is annotated ",
                               P.deviceNames[P.device[I]], " stage ", P.stage[I]);
    for (const std::string &In : nodeDataInputs(N))
      if (!Available.count(In))
        return makeInternalError(What, ": node '", N.name().empty() ? N.op_type() : N.name(), "' reads '", In,
                                 "', which the stage neither receives nor computes before it");
    for (const std::string &O : N.output())
      if (!O.empty()) Available.insert(O);
  }
  for (const auto &O : G.output())
    if (!Available.count(O.name()))
      return makeInternalError(What, ": output '", O.name(), "' is not computed");
  return Error::success();
}
