//===- IR/SafeShapeInference.cpp - Shape inference on untrusted models ---===//
//
// The per-node driver mirrors what ONNX 1.12's ShapeInferenceImplBase does
// for one graph (Constant values as input data, the schema's inference
// function or function body, merging into existing types, then data
// propagation), but in topological order, with each node's inference in its
// own try block and with the attribute and rank checks below run first. It
// leaves dims it cannot infer without a dim_param instead of inventing
// `unk__N` symbols, so the only symbols left are the model's own and
// binding the graph inputs (--dim) is all a user can and must do.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/SafeShapeInference.h"

#include "ExtraShapeRules.h"
#include "OpInferenceChecks.h"
#include "ShapeDataPropagation.h"
#include "onnx-partition/IR/OrtSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {
std::string nodeLabel(const onnx::NodeProto &N, int Index) {
  std::string Name = N.name().empty() ? N.op_type() + "_" + std::to_string(Index) : N.name();
  return "node '" + Name + "' (" + N.op_type() + ")";
}

std::string functionId(const std::string &Domain, const std::string &Name) { return Domain + ":" + Name; }

const onnx::AttributeProto *findAttr(const onnx::NodeProto &N, const char *Name) {
  for (const auto &A : N.attribute())
    if (A.name() == Name) return &A;
  return nullptr;
}

/// ONNX-domain ops whose inference is convPoolShapeInference (or its
/// ConvTranspose / MaxUnpool / RoiPool relatives): the index of the weight
/// input (-1 when none) and whether kernel_shape is required.
struct ConvPoolOp {
  int weightInput;
  bool needsKernelShape;
};
const ConvPoolOp *convPoolOp(const onnx::NodeProto &N) {
  if (!N.domain().empty() && N.domain() != "ai.onnx") return nullptr;
  static const std::unordered_map<std::string, ConvPoolOp> Ops = {
      {"Conv", {1, false}},          {"ConvInteger", {1, false}}, {"QLinearConv", {3, false}},
      {"ConvTranspose", {1, false}}, {"MaxPool", {-1, true}},     {"AveragePool", {-1, true}},
      {"LpPool", {-1, true}},        {"MaxUnpool", {-1, true}}};
  auto It = Ops.find(N.op_type());
  return It == Ops.end() ? nullptr : &It->second;
}

bool isConvPoolFamily(const onnx::NodeProto &N) {
  if (convPoolOp(N)) return true;
  if (!N.domain().empty() && N.domain() != "ai.onnx") return false;
  static const std::unordered_set<std::string> Others = {"MaxRoiPool", "GlobalAveragePool", "GlobalMaxPool",
                                                         "GlobalLpPool", "RoiAlign"};
  return Others.count(N.op_type()) > 0;
}

/// Attribute checks that need no shapes: the values ONNX divides by
/// (strides) or that size its loops (kernel_shape, dilations, pads, group).
/// Rank is the input's rank when known, else -1.
Error checkConvPoolAttributes(const onnx::NodeProto &N, int Index, int64_t Rank, const std::string &Path) {
  const ConvPoolOp *Op = convPoolOp(N);
  if (!Op) return Error::success();
  std::string Where = Path + ": " + nodeLabel(N, Index);
  int64_t Spatial = Rank >= 0 ? Rank - 2 : -1;
  if (Rank >= 0 && Rank < 3)
    return makeError(Where, ": input 0 has rank ", Rank,
                     "; convolution and pooling need rank >= 3 (batch, channels, spatial dims)");
  auto Ints = [&](const char *Name, int64_t Min, int64_t ExpectSize, int64_t *SizeOut) -> Error {
    const onnx::AttributeProto *A = findAttr(N, Name);
    if (!A) {
      *SizeOut = -1;
      return Error::success();
    }
    *SizeOut = A->ints_size();
    for (int I = 0; I < A->ints_size(); ++I)
      if (A->ints(I) < Min)
        return makeError(Where, ": attribute '", Name, "' has ", A->ints(I), " at index ", I,
                         "; it must be >= ", Min);
    if (ExpectSize >= 0 && A->ints_size() != ExpectSize)
      return makeError(Where, ": attribute '", Name, "' has ", A->ints_size(), " values; the input has ",
                       Spatial, " spatial dims, so it needs ", ExpectSize);
    return Error::success();
  };
  int64_t KSize, SSize, DSize, PSize;
  ONNXP_RETURN_IF_ERROR(Ints("kernel_shape", 1, Spatial, &KSize));
  ONNXP_RETURN_IF_ERROR(Ints("strides", 1, Spatial, &SSize));
  ONNXP_RETURN_IF_ERROR(Ints("dilations", 1, Spatial, &DSize));
  ONNXP_RETURN_IF_ERROR(Ints("pads", 0, Spatial >= 0 ? 2 * Spatial : -1, &PSize));
  if (Op->needsKernelShape && KSize < 0) return makeError(Where, ": attribute 'kernel_shape' is required");
  if (KSize == 0) return makeError(Where, ": attribute 'kernel_shape' is empty");
  // Without a known rank the lists must at least agree with each other.
  int64_t Ref = KSize >= 0 ? KSize : SSize >= 0 ? SSize : DSize;
  for (auto [Name, Size] : {std::pair<const char *, int64_t>{"strides", SSize}, {"dilations", DSize}})
    if (Ref >= 0 && Size >= 0 && Size != Ref)
      return makeError(Where, ": attribute '", Name, "' has ", Size, " values but kernel/stride lists have ",
                       Ref);
  if (PSize >= 0 && (PSize % 2 != 0 || (Ref >= 0 && PSize != 2 * Ref)))
    return makeError(Where, ": attribute 'pads' has ", PSize, " values; it needs two per spatial dim");
  if (const onnx::AttributeProto *G = findAttr(N, "group"); G && G->i() < 1)
    return makeError(Where, ": attribute 'group' is ", G->i(), "; it must be >= 1");
  if (N.op_type() == "ConvTranspose" && Spatial >= 0)
    for (const char *Name : {"output_padding", "output_shape"})
      if (const onnx::AttributeProto *A = findAttr(N, Name);
          A && A->ints_size() > 0 && A->ints_size() != Spatial && A->ints_size() != Rank)
        return makeError(Where, ": attribute '", Name, "' has ", A->ints_size(), " values for ", Spatial,
                         " spatial dims");
  return Error::success();
}

/// Static walk of a graph and everything nested in it.
class StaticValidator {
public:
  StaticValidator(const onnx::ModelProto &M, const std::string &Path) : M(M), Path(Path) {
    for (const auto &F : M.functions()) Functions[functionId(F.domain(), F.name())] = &F;
    for (const auto &O : M.opset_import())
      if (O.domain().empty() || O.domain() == "ai.onnx") Opset = static_cast<int>(O.version());
  }

  Error run() {
    ONNXP_RETURN_IF_ERROR(checkFunctionCalls());
    ONNXP_RETURN_IF_ERROR(walkGraph(M.graph(), 0, "graph"));
    for (const auto &F : M.functions())
      ONNXP_RETURN_IF_ERROR(walkNodes(F.node(), 1, "function '" + F.name() + "'"));
    return Error::success();
  }

private:
  Error walkGraph(const onnx::GraphProto &G, int Depth, const std::string &Scope) {
    if (Depth > kMaxGraphNesting)
      return makeError(Path, ": subgraphs nest deeper than ", kMaxGraphNesting, " levels (in ", Scope, ")");
    for (const auto &I : G.initializer())
      ONNXP_RETURN_IF_ERROR(checkInlineTensorData(I, Path + ": initializer '" + I.name() + "'"));
    return walkNodes(G.node(), Depth, Scope);
  }

  template <typename NodeList> Error walkNodes(const NodeList &Nodes, int Depth, const std::string &Scope) {
    int Index = 0;
    for (const onnx::NodeProto &N : Nodes) {
      ONNXP_RETURN_IF_ERROR(checkConvPoolAttributes(N, Index, -1, Path));
      ONNXP_RETURN_IF_ERROR(checkOpAttributes(N, Opset, Path + ": " + nodeLabel(N, Index)));
      for (const auto &A : N.attribute()) {
        std::string What = Path + ": " + nodeLabel(N, Index) + ": attribute '" + A.name() + "'";
        if (A.has_t()) ONNXP_RETURN_IF_ERROR(checkInlineTensorData(A.t(), What));
        for (const auto &T : A.tensors()) ONNXP_RETURN_IF_ERROR(checkInlineTensorData(T, What));
        std::string Inner = Scope + " > " + nodeLabel(N, Index) + "." + A.name();
        if (A.has_g()) ONNXP_RETURN_IF_ERROR(walkGraph(A.g(), Depth + 1, Inner));
        for (const auto &G : A.graphs()) ONNXP_RETURN_IF_ERROR(walkGraph(G, Depth + 1, Inner));
      }
      ++Index;
    }
    return Error::success();
  }

  /// Model-local functions a list of nodes calls, subgraphs included.
  template <typename NodeList> void callees(const NodeList &Nodes, std::set<std::string> &Out, int Depth) {
    if (Depth > kMaxGraphNesting) return;
    for (const onnx::NodeProto &N : Nodes) {
      std::string Id = functionId(N.domain(), N.op_type());
      if (Functions.count(Id)) Out.insert(Id);
      for (const auto &A : N.attribute()) {
        if (A.has_g()) callees(A.g().node(), Out, Depth + 1);
        for (const auto &G : A.graphs()) callees(G.node(), Out, Depth + 1);
      }
    }
  }

  /// ONNX inlines model-local functions during inference and the checker
  /// walks them recursively: a cycle or a very long chain overflows the stack.
  Error checkFunctionCalls() {
    std::unordered_map<std::string, std::set<std::string>> Calls;
    for (auto &[Id, F] : Functions) callees(F->node(), Calls[Id], 0);
    // Iterative DFS: 0 = new, 1 = on the stack, 2 = done; Height = longest chain below.
    std::unordered_map<std::string, int> State, Height;
    for (auto &[Root, F] : Functions) {
      if (State[Root]) continue;
      std::vector<std::pair<std::string, std::set<std::string>::const_iterator>> Stack;
      State[Root] = 1;
      Stack.emplace_back(Root, Calls[Root].cbegin());
      while (!Stack.empty()) {
        auto &[Id, It] = Stack.back();
        if (It == Calls[Id].cend()) {
          int H = 0;
          for (const std::string &C : Calls[Id]) H = std::max(H, Height[C] + 1);
          Height[Id] = H;
          if (H > kMaxGraphNesting)
            return makeError(Path, ": model-local function '", Functions[Id]->name(),
                             "' starts a call chain deeper than ", kMaxGraphNesting, " functions");
          State[Id] = 2;
          Stack.pop_back();
          continue;
        }
        std::string Callee = *It++;
        if (State[Callee] == 1) {
          std::string Chain;
          bool On = false;
          for (auto &Frame : Stack) {
            On |= Frame.first == Callee;
            if (On) Chain += Functions[Frame.first]->name() + " -> ";
          }
          return makeError(Path, ": model-local function '", Functions[Callee]->name(), "' calls itself (",
                           Chain, Functions[Callee]->name(), "); ONNX functions cannot be recursive");
        }
        if (State[Callee] == 0) {
          State[Callee] = 1;
          Stack.emplace_back(Callee, Calls[Callee].cbegin());
        }
      }
    }
    return Error::success();
  }

  const onnx::ModelProto &M;
  const std::string &Path;
  int Opset = 17; // the default domain's; Scan's inputs changed at 9
  std::unordered_map<std::string, const onnx::FunctionProto *> Functions;
};

/// Whether a graph (recursively) holds a node whose inference needs the rank
/// checks the per-node driver does only for the main graph.
bool containsConvPool(const onnx::GraphProto &G, int Depth = 0) {
  if (Depth > kMaxGraphNesting) return true;
  for (const auto &N : G.node()) {
    if (isConvPoolFamily(N) || needsRankChecks(N)) return true;
    for (const auto &A : N.attribute()) {
      if (A.has_g() && containsConvPool(A.g(), Depth + 1)) return true;
      for (const auto &S : A.graphs())
        if (containsConvPool(S, Depth + 1)) return true;
    }
  }
  return false;
}

/// Output types of ONNX Runtime contrib ops (com.microsoft) that ONNX has
/// no schema for, from their definitions in ORT's contrib_defs.cc /
/// training_op_defs.cc: output I has the type of input From[I] (-1: none).
/// Registering real schemas would make the checker judge these nodes, so
/// the rules live here and only feed inference.
const std::vector<int> *contribTypeRule(const onnx::NodeProto &N) {
  if (N.domain() != "com.microsoft") return nullptr;
  static const std::unordered_map<std::string, std::vector<int>> Rules = {
      {"FastGelu", {0}},
      {"Gelu", {0}},
      {"BiasGelu", {0}},
      {"QuickGelu", {0}},
      {"ReluGrad", {0}},
      {"GeluGrad", {0}},
      {"FastGeluGrad", {0}},
      {"BiasGeluGrad_dX", {0}},
      {"BiasFastGeluGrad_dX", {0}},
      {"SoftmaxGrad", {0}},
      {"SoftmaxGrad_13", {0}},
      {"LogSoftmaxGrad", {0}},
      {"LogSoftmaxGrad_13", {0}},
      {"DropoutGrad", {0}},
      {"BitmaskDropoutGrad", {0}},
      {"SigmoidGrad", {0}},
      {"TanhGrad", {0}},
      {"ConvGrad", {1, 2}},
      {"LayerNormalizationGrad", {1, 2, 2}},
      {"SimplifiedLayerNormalizationGrad", {1, 2}},
      {"InPlaceAccumulatorV2", {-1, 0}}};
  auto It = Rules.find(N.op_type());
  return It == Rules.end() ? nullptr : &It->second;
}

bool functionContainsConvPool(const onnx::FunctionProto &F) {
  onnx::GraphProto G;
  *G.mutable_node() = F.node();
  return containsConvPool(G);
}

int64_t rankOf(const onnx::TypeProto *T) {
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape()) return -1;
  return T->tensor_type().shape().dim_size();
}

onnx::TypeProto typeOfInitializer(const onnx::TensorProto &T) {
  onnx::TypeProto Ty;
  auto *TT = Ty.mutable_tensor_type();
  TT->set_elem_type(T.data_type());
  auto *S = TT->mutable_shape();
  for (int64_t D : T.dims()) S->add_dim()->set_dim_value(D);
  return Ty;
}
} // namespace

Error onnxp::checkTextNesting(const std::string &Text, const std::string &Path) {
  int Depth = 0, Line = 1;
  bool InString = false;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '\n') ++Line;
    if (InString) {
      if (C == '\\') ++I;
      else if (C == '"') InString = false;
      continue;
    }
    if (C == '"') InString = true;
    else if (C == '#') {
      while (I + 1 < Text.size() && Text[I + 1] != '\n') ++I;
    } else if (C == '(' || C == '[' || C == '{' || C == '<') {
      if (++Depth > kMaxTextNesting)
        return makeError(Path, ":", Line, ": brackets nest deeper than ", kMaxTextNesting,
                         " levels; onnx-partition does not parse ONNX text nested this deep");
    } else if ((C == ')' || C == ']' || C == '}' || C == '>') && Depth > 0) {
      // '=>' (graph signature arrow) closes nothing.
      if (!(C == '>' && I > 0 && Text[I - 1] == '=')) --Depth;
    }
  }
  return Error::success();
}

Error onnxp::validateForShapeInference(const onnx::ModelProto &M, const std::string &Path) {
  return StaticValidator(M, Path).run();
}

bool onnxp::subgraphsNeedRankChecks(const onnx::ModelProto &M) {
  for (const auto &N : M.graph().node())
    for (const auto &A : N.attribute()) {
      if (A.has_g() && containsConvPool(A.g())) return true;
      for (const auto &S : A.graphs())
        if (containsConvPool(S)) return true;
    }
  return std::any_of(M.functions().begin(), M.functions().end(), functionContainsConvPool);
}

bool onnxp::sortNodesTopologically(onnx::GraphProto &G) {
  int N = G.node_size();
  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < N; ++I)
    for (const std::string &O : G.node(I).output())
      if (!O.empty() && !Producer.emplace(O, I).second) return false;
  std::vector<std::vector<int>> Succ(N);
  std::vector<int> InDeg(N, 0);
  bool Sorted = true;
  for (int I = 0; I < N; ++I) {
    std::unordered_set<std::string> Inputs(G.node(I).input().begin(), G.node(I).input().end());
    // Subgraph reads of outer names are dependencies too.
    std::function<void(const onnx::GraphProto &, int)> Outer = [&](const onnx::GraphProto &S, int Depth) {
      if (Depth > kMaxGraphNesting) return;
      for (const auto &SN : S.node()) {
        Inputs.insert(SN.input().begin(), SN.input().end());
        for (const auto &A : SN.attribute()) {
          if (A.has_g()) Outer(A.g(), Depth + 1);
          for (const auto &SS : A.graphs()) Outer(SS, Depth + 1);
        }
      }
    };
    for (const auto &A : G.node(I).attribute()) {
      if (A.has_g()) Outer(A.g(), 1);
      for (const auto &S : A.graphs()) Outer(S, 1);
    }
    for (const std::string &In : Inputs) {
      auto P = Producer.find(In);
      if (In.empty() || P == Producer.end() || P->second == I) continue;
      Succ[P->second].push_back(I);
      ++InDeg[I];
      Sorted &= P->second < I;
    }
  }
  if (Sorted) return false;
  std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
  for (int I = 0; I < N; ++I)
    if (InDeg[I] == 0) Ready.push(I);
  std::vector<int> Order;
  while (!Ready.empty()) {
    int I = Ready.top();
    Ready.pop();
    Order.push_back(I);
    for (int S : Succ[I])
      if (--InDeg[S] == 0) Ready.push(S);
  }
  if (static_cast<int>(Order.size()) != N) return false; // a cycle: reported elsewhere
  google::protobuf::RepeatedPtrField<onnx::NodeProto> Nodes;
  for (int I : Order) *Nodes.Add() = std::move(*G.mutable_node(I));
  G.mutable_node()->Swap(&Nodes);
  return true;
}

namespace {
/// One run of inferShapesSafely: what is known so far about every tensor by
/// name (types, constant data, computed shape vectors), and the per-node
/// steps of the banner, each a method.
class SafeInference {
public:
  SafeInference(onnx::ModelProto &M, const std::string &Path)
      : M(M), Path(Path), G(*M.mutable_graph()), Options(/*check_type=*/false, /*error_mode=*/0,
                                                         /*enable_data_propagation=*/true) {}

  Error run(std::vector<std::string> &Notes);

private:
  onnx::ModelProto &M;
  const std::string &Path;
  onnx::GraphProto &G;
  std::unordered_map<std::string, int> Opsets;
  onnx::shape_inference::ModelLocalFunctionsMap Functions;
  std::unordered_map<std::string, bool> FunctionHasConvPool;
  // Types by name: node-based map, so the pointers handed to ONNX stay valid.
  std::unordered_map<std::string, onnx::TypeProto> Types;
  std::unordered_map<std::string, onnx::TypeProto *> TypePtrs;
  std::unordered_map<std::string, const onnx::TensorProto *> Data;
  std::unordered_map<std::string, const onnx::SparseTensorProto *> SparseData;
  std::unordered_map<std::string, onnx::TensorShapeProto> ShapeData;
  std::deque<onnx::TensorProto> Synthesized; // computed shape vectors as constants
  std::unordered_set<std::string> Declared;  // value_info / outputs: merged into, not added
  onnx::ShapeInferenceOptions Options;
  int Failed = 0;
  std::vector<std::string> FirstFailures;
  std::vector<std::string> NewValueInfo;

  /// Integer values of a tensor: computed, or read from a 0-D/1-D constant.
  const onnx::TensorShapeProto *valuesOf(const std::string &Name);
  void put(const std::string &Name, const onnx::TypeProto &T);
  void fail(const onnx::NodeProto &N, int Index, std::string Why);
  void collectOpsetsAndFunctions();
  /// Types and data of initializers, graph inputs, value_info and outputs.
  void seedTypes();
  /// A contrib op without schema: output types from its type rule.
  void applyContribTypeRule(const onnx::NodeProto &N);
  /// ONNX 1.12's Gemm inference never compares A's and B's inner dims (its
  /// MatMul's does): the mismatch, as a failure to note, or "".
  std::string gemmInnerDimsDiffer(const onnx::NodeProto &N) const;
  /// Ranks are known here: check what convPoolShapeInference would index.
  Error checkConvPoolRanks(const onnx::NodeProto &N, int Index);
  /// Inference functions of older opsets read constant inputs only
  /// (getInputData): hand them computed shape vectors as constants.
  void synthesizeConstantInputs(const onnx::NodeProto &N);
  /// The schema's inference function, its function body, or the model-local
  /// function's body; false when it failed (noted).
  bool runInference(const onnx::NodeProto &N, int Index, const onnx::OpSchema *Schema,
                    onnx::shape_inference::ModelLocalFunctionsMap::const_iterator Local,
                    onnx::shape_inference::InferenceContextImpl &Ctx);
  /// Inferred output types: new names are added, declared ones merged into.
  void mergeOutputTypes(const onnx::NodeProto &N, int Index,
                        onnx::shape_inference::InferenceContextImpl &Ctx);
  bool contradictsDeclaredShape(const std::string &Name, const onnx::TypeProto &Inferred,
                                onnx::TypeProto &Have);
  std::vector<std::string> ContradictedShapes;
  /// The schema's data propagation, then our own for shape arithmetic.
  void propagateData(onnx::NodeProto &N, int Index, const onnx::OpSchema *Schema);
  Error inferNode(int Index);
  /// Our rules for what ONNX leaves out (ExtraShapeRules.h): outputs still
  /// untyped, or typed without a full shape, take the rule's type.
  void applyExtraShapeRules(const onnx::NodeProto &N, int Opset);
  /// The types found go back into value_info and the graph outputs.
  void writeTypes();
};

const onnx::TensorShapeProto *SafeInference::valuesOf(const std::string &Name) {
  if (auto It = ShapeData.find(Name); It != ShapeData.end()) return &It->second;
  auto D = Data.find(Name);
  if (D == Data.end()) return nullptr;
  std::optional<onnx::TensorShapeProto> S = shapeDataOfTensor(*D->second);
  return S ? &ShapeData.emplace(Name, std::move(*S)).first->second : nullptr;
}

void SafeInference::put(const std::string &Name, const onnx::TypeProto &T) {
  onnx::TypeProto &Slot = Types[Name];
  Slot = T;
  TypePtrs[Name] = &Slot;
}

void SafeInference::fail(const onnx::NodeProto &N, int Index, std::string Why) {
  // ONNX's messages span lines; a note is one line.
  for (char &C : Why)
    if (C == '\n' || C == '\r') C = ' ';
  if (Why.size() > 200) Why = Why.substr(0, 200) + "...";
  if (++Failed <= 3) FirstFailures.push_back(nodeLabel(N, Index) + ": " + Why);
}

void SafeInference::collectOpsetsAndFunctions() {
  for (const auto &O : M.opset_import()) Opsets[O.domain() == "ai.onnx" ? "" : O.domain()] = O.version();
  for (const auto &F : M.functions()) {
    Functions[functionId(F.domain(), F.name())] = &F;
    FunctionHasConvPool[functionId(F.domain(), F.name())] = functionContainsConvPool(F);
  }
}

void SafeInference::seedTypes() {
  for (const auto &I : G.initializer()) {
    put(I.name(), typeOfInitializer(I));
    Data[I.name()] = &I;
  }
  for (const auto &S : G.sparse_initializer()) SparseData[S.values().name()] = &S;
  for (const auto &VI : G.input())
    if (VI.has_type()) put(VI.name(), VI.type());
  for (const auto *List : {&G.value_info(), &G.output()})
    for (const auto &VI : *List)
      if (VI.has_type() && !TypePtrs.count(VI.name())) {
        put(VI.name(), VI.type());
        Declared.insert(VI.name());
      }
}

void SafeInference::applyContribTypeRule(const onnx::NodeProto &N) {
  const std::vector<int> *Rule = contribTypeRule(N);
  if (!Rule) return;
  for (int O = 0; O < N.output_size() && O < static_cast<int>(Rule->size()); ++O) {
    int From = (*Rule)[O];
    if (N.output(O).empty() || TypePtrs.count(N.output(O)) || From < 0 || From >= N.input_size()) continue;
    auto It = TypePtrs.find(N.input(From));
    if (It == TypePtrs.end()) continue;
    put(N.output(O), *It->second);
    NewValueInfo.push_back(N.output(O));
  }
}

Error SafeInference::checkConvPoolRanks(const onnx::NodeProto &N, int Index) {
  ONNXP_RETURN_IF_ERROR(checkOpInputRanks(
      N,
      [&](int I) -> int64_t {
        if (I < 0 || I >= N.input_size() || N.input(I).empty()) return -1;
        auto It = TypePtrs.find(N.input(I));
        return It == TypePtrs.end() ? -1 : rankOf(It->second);
      },
      Path + ": " + nodeLabel(N, Index)));
  if (!isConvPoolFamily(N)) return Error::success();
  int64_t Rank = N.input_size() > 0 && TypePtrs.count(N.input(0)) ? rankOf(TypePtrs[N.input(0)]) : -1;
  ONNXP_RETURN_IF_ERROR(checkConvPoolAttributes(N, Index, Rank, Path));
  const ConvPoolOp *Op = convPoolOp(N);
  if (!Op || Op->weightInput < 0 || Rank < 0 || N.input_size() <= Op->weightInput ||
      !TypePtrs.count(N.input(Op->weightInput)))
    return Error::success();
  int64_t WRank = rankOf(TypePtrs[N.input(Op->weightInput)]);
  if (WRank >= 0 && WRank != Rank)
    return makeError(Path, ": ", nodeLabel(N, Index), ": weight input has rank ", WRank,
                     " but the data input has rank ", Rank, "; they must be equal");
  return Error::success();
}

void SafeInference::synthesizeConstantInputs(const onnx::NodeProto &N) {
  for (const std::string &In : N.input()) {
    if (In.empty() || Data.count(In)) continue;
    auto It = ShapeData.find(In);
    bool Scalar = TypePtrs.count(In) && rankOf(TypePtrs[In]) == 0;
    if (It == ShapeData.end()) continue;
    // Values of a float tensor stay ours: ONNX would read an int64 constant.
    if (!TypePtrs.count(In) || !TypePtrs[In]->has_tensor_type() ||
        (TypePtrs[In]->tensor_type().elem_type() != onnx::TensorProto::INT64 &&
         TypePtrs[In]->tensor_type().elem_type() != onnx::TensorProto::INT32))
      continue;
    if (std::optional<onnx::TensorProto> T = tensorOfShapeData(It->second, In, Scalar)) {
      Synthesized.push_back(std::move(*T));
      Data[In] = &Synthesized.back();
    }
  }
}

std::string SafeInference::gemmInnerDimsDiffer(const onnx::NodeProto &N) const {
  if (N.op_type() != "Gemm" || !(N.domain().empty() || N.domain() == "ai.onnx") || N.input_size() < 2)
    return "";
  // Issue 37's study: an MLP export's feature dim bound by --dim to a value
  // its weight contradicts planned silently, and ONNX Runtime then refused
  // every stage ("GEMM: Dimension mismatch"). Inner dim of A: dim 1, or 0
  // under transA; of B: dim 0, or 1 under transB (ONNX Gemm).
  auto InnerDim = [&](int I, const char *Trans) -> int64_t {
    auto It = TypePtrs.find(N.input(I));
    if (It == TypePtrs.end() || !It->second->has_tensor_type()) return -1;
    const auto &S = It->second->tensor_type().shape();
    if (!It->second->tensor_type().has_shape() || S.dim_size() != 2) return -1;
    const auto &D = S.dim(static_cast<int>((nodeIntAttribute(N, Trans, 0) != 0) == (I == 0) ? 0 : 1));
    return D.has_dim_value() ? D.dim_value() : -1;
  };
  const int64_t KA = InnerDim(0, "transA"), KB = InnerDim(1, "transB");
  if (KA < 0 || KB < 0 || KA == KB) return "";
  return "[ShapeInferenceError] Incompatible dimensions for Gemm: A's inner dimension is " +
         std::to_string(KA) + ", B's is " + std::to_string(KB) + " (ONNX Runtime refuses to run it)";
}

bool SafeInference::runInference(const onnx::NodeProto &N, int Index, const onnx::OpSchema *Schema,
                                 onnx::shape_inference::ModelLocalFunctionsMap::const_iterator Local,
                                 onnx::shape_inference::InferenceContextImpl &Ctx) {
  try {
    if (Schema && Schema->has_type_and_shape_inference_function()) {
      Schema->GetTypeAndShapeInferenceFunction()(Ctx);
    } else if (Schema && Schema->HasFunction()) {
      onnx::shape_inference::InferShapeForFunctionNode(*Schema->GetFunction(),
                                                       onnx::OpSchemaRegistry::Instance(), Ctx, Options,
                                                       Functions, nullptr, &ShapeData);
    } else if (!Schema) {
      if (FunctionHasConvPool[Local->first]) {
        fail(N, Index, "model-local function with convolution or pooling is not inferred");
        return false;
      }
      std::unordered_map<std::string, int> FnOpsets;
      for (const auto &O : Local->second->opset_import()) FnOpsets[O.domain()] = O.version();
      onnx::shape_inference::InferShapeForFunctionNode(*Local->second, FnOpsets,
                                                       onnx::OpSchemaRegistry::Instance(), Ctx, Options,
                                                       Functions, nullptr, &ShapeData);
    }
  } catch (const std::exception &Ex) {
    fail(N, Index, Ex.what());
    return false;
  }
  return true;
}

/// "float[2,?,N]" for a tensor type, for notes.
std::string tensorTypeText(const onnx::TypeProto &T) {
  std::string S =
      onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(T.tensor_type().elem_type()));
  for (char &C : S) C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  if (!T.tensor_type().has_shape()) return S;
  S += "[";
  for (int I = 0; I < T.tensor_type().shape().dim_size(); ++I) {
    const auto &D = T.tensor_type().shape().dim(I);
    S += (I ? "," : "") + (D.has_dim_value()   ? std::to_string(D.dim_value())
                           : D.has_dim_param() ? D.dim_param()
                                               : "?");
  }
  return S + "]";
}

/// Issue 37, item 2: ONNX Runtime runs a model whose declared graph output
/// or value_info shape contradicts inference (same element type, another
/// rank or a differing fixed dim: ORT warns "Error merging shape info" and
/// merges leniently). The inferred type replaces the declared one, with a
/// note saying where they differ; true when that happened.
bool SafeInference::contradictsDeclaredShape(const std::string &Name, const onnx::TypeProto &Inferred,
                                             onnx::TypeProto &Have) {
  if (!Declared.count(Name)) return false;
  std::string Where = shapeContradiction(Have, Inferred);
  if (Where.empty()) return false;
  bool IsOutput = std::any_of(G.output().begin(), G.output().end(),
                              [&](const onnx::ValueInfoProto &VI) { return VI.name() == Name; });
  ContradictedShapes.push_back(std::string("warning: ") + (IsOutput ? "graph output '" : "value_info of '") +
                               Name + "' is declared " + tensorTypeText(Have) + " but inference gives " +
                               tensorTypeText(Inferred) + " (" + Where +
                               "); planned and written as inferred (ONNX Runtime runs such a model)");
  Have = Inferred;
  return true;
}

void SafeInference::mergeOutputTypes(const onnx::NodeProto &N, int Index,
                                     onnx::shape_inference::InferenceContextImpl &Ctx) {
  for (int O = 0; O < N.output_size(); ++O) {
    const std::string &Name = N.output(O);
    const onnx::TypeProto &Inferred = *Ctx.getOutputType(O);
    if (Name.empty() || Inferred.value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    auto It = TypePtrs.find(Name);
    if (It == TypePtrs.end()) {
      put(Name, Inferred);
      NewValueInfo.push_back(Name);
      continue;
    }
    if (contradictsDeclaredShape(Name, Inferred, *It->second)) continue;
    try {
      onnx::shape_inference::mergeShapesAndTypes(Inferred, It->second);
    } catch (const std::exception &Ex) {
      fail(N, Index, std::string("inferred type disagrees with the declared one: ") + Ex.what());
    }
  }
}

void SafeInference::propagateData(onnx::NodeProto &N, int Index, const onnx::OpSchema *Schema) {
  if (Schema && Schema->has_data_propagation_function()) {
    try {
      onnx::shape_inference::DataPropagationContextImpl DP(N, TypePtrs, Data, ShapeData);
      Schema->GetDataPropagationFunction()(DP);
    } catch (const std::exception &Ex) { fail(N, Index, std::string("data propagation: ") + Ex.what()); }
  }
  if (N.output_size() == 0 || N.output(0).empty() || ShapeData.count(N.output(0))) return;
  ShapeDataInputs In{[&](int I) { return I < N.input_size() ? valuesOf(N.input(I)) : nullptr; },
                     [&](int I) -> const onnx::TypeProto * {
                       auto It = I < N.input_size() ? TypePtrs.find(N.input(I)) : TypePtrs.end();
                       return It == TypePtrs.end() ? nullptr : It->second;
                     }};
  if (std::optional<onnx::TensorShapeProto> V = propagateShapeData(N, In))
    ShapeData.emplace(N.output(0), std::move(*V));
}

Error SafeInference::inferNode(int Index) {
  onnx::NodeProto &N = *G.mutable_node(Index);
  std::string Domain = N.domain() == "ai.onnx" ? "" : N.domain();
  if (N.op_type() == "Constant" && N.output_size() == 1)
    if (const onnx::AttributeProto *V = findAttr(N, "value"); V && V->has_t()) Data[N.output(0)] = &V->t();
  auto Opset = Opsets.find(Domain);
  const onnx::OpSchema *Schema =
      Opset == Opsets.end() ? nullptr : onnx::OpSchemaRegistry::Schema(N.op_type(), Opset->second, Domain);
  auto Local = Functions.find(functionId(N.domain(), N.op_type()));
  if (!Schema && Local == Functions.end()) {
    applyExtraShapeRules(N, Opset == Opsets.end() ? 0 : Opset->second);
    applyContribTypeRule(N);
    return Error::success(); // other unknown ops: completed by gradient naming later
  }

  // An input with no type comes from an op nothing knows (com.microsoft
  // without a schema): the outputs stay unknown, and that is no failure of
  // this node. (ONNX 1.12's data propagators would even dereference null.)
  bool AllInputsTyped = true;
  for (const std::string &In : N.input()) AllInputsTyped &= In.empty() || TypePtrs.count(In) > 0;
  if (!AllInputsTyped) return Error::success();

  ONNXP_RETURN_IF_ERROR(checkConvPoolRanks(N, Index));
  if (std::string Why = gemmInnerDimsDiffer(N); !Why.empty()) {
    fail(N, Index, Why);
    return Error::success();
  }
  synthesizeConstantInputs(N);
  onnx::shape_inference::GraphInferenceContext GraphCtx(TypePtrs, Opsets, nullptr, Functions,
                                                        onnx::OpSchemaRegistry::Instance(), &ShapeData,
                                                        static_cast<int>(M.ir_version()));
  // Subgraphs are inferred by ONNX itself, without the rank checks above:
  // allowed only when they hold no convolution or pooling.
  bool SubgraphsSafe = true;
  for (const auto &A : N.attribute()) {
    if (A.has_g()) SubgraphsSafe &= !containsConvPool(A.g());
    for (const auto &S : A.graphs()) SubgraphsSafe &= !containsConvPool(S);
  }
  onnx::shape_inference::InferenceContextImpl Ctx(N, TypePtrs, Data, SparseData, &ShapeData,
                                                  SubgraphsSafe ? &GraphCtx : nullptr);
  if (!runInference(N, Index, Schema, Local, Ctx)) return Error::success();
  mergeOutputTypes(N, Index, Ctx);
  propagateData(N, Index, Schema);
  // A model-local function whose domain has no opset import reaches here
  // without an opset (a libFuzzer finding: Opset->second read end()).
  applyExtraShapeRules(N, Opset == Opsets.end() ? 0 : Opset->second);
  return Error::success();
}

void SafeInference::applyExtraShapeRules(const onnx::NodeProto &N, int Opset) {
  ShapeDataInputs In{[&](int I) { return I < N.input_size() ? valuesOf(N.input(I)) : nullptr; },
                     [&](int I) -> const onnx::TypeProto * {
                       auto It = I < N.input_size() ? TypePtrs.find(N.input(I)) : TypePtrs.end();
                       return It == TypePtrs.end() ? nullptr : It->second;
                     }};
  std::optional<ExtraShapeResult> R = inferExtraShapes(N, Opset, In);
  if (!R) return;
  for (int O = 0; O < N.output_size(); ++O) {
    const std::string &Name = N.output(O);
    if (Name.empty()) continue;
    if (O < static_cast<int>(R->values.size()) && R->values[O] && !ShapeData.count(Name))
      ShapeData.emplace(Name, *R->values[O]);
    if (O >= static_cast<int>(R->types.size()) || !R->types[O]) continue;
    auto It = TypePtrs.find(Name);
    if (It == TypePtrs.end()) {
      put(Name, *R->types[O]);
      NewValueInfo.push_back(Name);
    } else if (rankOf(It->second) < 0 || It->second->tensor_type().elem_type() == 0) {
      *It->second = *R->types[O];
    }
  }
}

void SafeInference::writeTypes() {
  for (auto &VI : *G.mutable_value_info())
    if (auto It = TypePtrs.find(VI.name()); It != TypePtrs.end()) *VI.mutable_type() = *It->second;
  for (auto &VI : *G.mutable_output())
    if (auto It = TypePtrs.find(VI.name()); It != TypePtrs.end()) *VI.mutable_type() = *It->second;
  std::unordered_set<std::string> Outputs;
  for (const auto &VI : G.output()) Outputs.insert(VI.name());
  for (const std::string &Name : NewValueInfo) {
    if (Outputs.count(Name)) continue;
    auto *VI = G.add_value_info();
    VI->set_name(Name);
    *VI->mutable_type() = *TypePtrs[Name];
  }
}

Error SafeInference::run(std::vector<std::string> &Notes) {
  collectOpsetsAndFunctions();
  seedTypes();
  for (int Index = 0; Index < G.node_size(); ++Index) ONNXP_RETURN_IF_ERROR(inferNode(Index));
  writeTypes();
  Notes.insert(Notes.end(), ContradictedShapes.begin(), ContradictedShapes.end());
  if (Failed) {
    std::string Note = "shape inference failed for " + std::to_string(Failed) +
                       " node(s); their outputs have unknown shapes (";
    for (size_t I = 0; I < FirstFailures.size(); ++I) Note += (I ? "; " : "") + FirstFailures[I];
    Notes.push_back(Note + (Failed > 3 ? "; ...)" : ")"));
  }
  return Error::success();
}
} // namespace

Error onnxp::inferShapesSafely(onnx::ModelProto &M, const std::string &Path,
                               std::vector<std::string> &Notes) {
  ONNXP_RETURN_IF_ERROR(validateForShapeInference(M, Path));
  registerOrtOnnxDomainSchemas(); // the same schemas the output checker uses
  sortNodesTopologically(*M.mutable_graph());
  return SafeInference(M, Path).run(Notes);
}

std::string onnxp::shapeContradiction(const onnx::TypeProto &Declared, const onnx::TypeProto &Inferred) {
  if (!Inferred.has_tensor_type() || !Declared.has_tensor_type() || !Inferred.tensor_type().has_shape() ||
      !Declared.tensor_type().has_shape())
    return "";
  const auto &I = Inferred.tensor_type(), &D = Declared.tensor_type();
  // A differing element type is an error in ONNX Runtime too.
  if (I.elem_type() != D.elem_type() && I.elem_type() != 0 && D.elem_type() != 0) return "";
  if (I.shape().dim_size() != D.shape().dim_size())
    return "rank " + std::to_string(D.shape().dim_size()) + " declared, " +
           std::to_string(I.shape().dim_size()) + " inferred";
  std::string Dims;
  for (int K = 0; K < I.shape().dim_size(); ++K) {
    const auto &A = D.shape().dim(K), &B = I.shape().dim(K);
    if (A.has_dim_value() && B.has_dim_value() && A.dim_value() != B.dim_value())
      Dims += (Dims.empty() ? "dim " : ", dim ") + std::to_string(K) + ": " + std::to_string(A.dim_value()) +
              " declared, " + std::to_string(B.dim_value()) + " inferred";
  }
  return Dims;
}
