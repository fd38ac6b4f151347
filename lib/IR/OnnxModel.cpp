//===- IR/OnnxModel.cpp - Load, check and shape-infer ONNX models -------===//
//
// The ONNX front end. Loading never touches external weight files: their
// sizes come from TensorProto.dims (DESIGN.md, "Facts about the inputs").
// Shape inference runs on a copy of the model, so the model we write back
// keeps its original value_info and symbolic dims.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/IR/DimExpression.h"
#include "onnx-partition/IR/SafeShapeInference.h"

#include "onnx-partition/IR/ExternalData.h"
#include "onnx-partition/IR/OpsetLowering.h"

#include <onnx/defs/parser.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;
namespace fs = std::filesystem;

double onnxp::elementBytes(int32_t T) {
  using TP = onnx::TensorProto;
  switch (T) {
  case TP::FLOAT:
  case TP::INT32:
  case TP::UINT32: return 4;
  case TP::DOUBLE:
  case TP::INT64:
  case TP::UINT64:
  case TP::COMPLEX64: return 8;
  case TP::FLOAT16:
  case TP::BFLOAT16:
  case TP::INT16:
  case TP::UINT16: return 2;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL: return 1;
  case TP::COMPLEX128: return 16;
  default: return 0;
  }
}

bool TensorInfo::fullyKnown() const {
  if (!hasShape) return false;
  for (int64_t D : dims)
    if (D < 0) return false;
  return true;
}

std::optional<double> TensorInfo::numElements() const {
  if (!fullyKnown()) return std::nullopt;
  double N = 1;
  for (int64_t D : dims) N *= static_cast<double>(D);
  return N;
}

std::optional<double> TensorInfo::bytes() const {
  std::optional<double> N = numElements();
  double E = elementBytes(elemType);
  if (!N || E == 0) return std::nullopt;
  return *N * E;
}

const TensorInfo *OnnxModel::tensor(const std::string &Name) const {
  auto It = tensors.find(Name);
  return It == tensors.end() ? nullptr : &It->second;
}

double OnnxModel::tensorBytesOrZero(const std::string &Name) const {
  const TensorInfo *I = tensor(Name);
  std::optional<double> B = I ? I->bytes() : std::nullopt;
  return B ? *B : 0;
}

bool onnxp::hasSubgraph(const onnx::NodeProto &N) {
  for (const auto &A : N.attribute())
    if (A.has_g() || A.graphs_size() > 0) return true;
  return false;
}

bool OnnxModel::isInitializer(const std::string &Name) const {
  for (const auto &I : graph().initializer())
    if (I.name() == Name) return true;
  return false;
}

bool OnnxModel::isGraphInput(const std::string &Name) const {
  for (const auto &I : graph().input())
    if (I.name() == Name) return true;
  return false;
}

bool onnxp::looksLikeOnnxText(const std::string &C) {
  // Skip whitespace and '#' comment lines, then expect '<' (model header)
  // or an identifier (a bare graph).
  size_t I = 0;
  while (I < C.size()) {
    if (std::isspace(static_cast<unsigned char>(C[I]))) {
      ++I;
      continue;
    }
    if (C[I] == '#') {
      while (I < C.size() && C[I] != '\n') ++I;
      continue;
    }
    break;
  }
  if (I >= C.size()) return false;
  if (C[I] == '<') return true;
  // Binary protobufs start with a field tag byte, which is never a letter
  // followed by printable text all the way to a '('.
  size_t J = I;
  while (J < C.size() && (std::isalnum(static_cast<unsigned char>(C[J])) || C[J] == '_')) ++J;
  while (J < C.size() && C[J] == ' ') ++J;
  return J > I && J < C.size() && C[J] == '(';
}

namespace {
/// Opens the model's data files once (issue 39, item 9: what is copied at
/// write is what was checked here) and lists the tensors whose data is absent.
Error openExternalData(OnnxModel &M) {
  Expected<ExternalSources> Sources = openExternalSources(M.proto, modelFolder(M.path));
  if (!Sources) return Sources.takeError();
  M.externalSources = std::make_shared<const ExternalSources>(std::move(*Sources));
  forEachExternalTensor(M.proto, [&](const onnx::TensorProto &T) {
    ExternalRef R = externalRef(T);
    if (R.location.empty() ||
        !M.externalSources->count(std::filesystem::path(R.location).lexically_normal().string()))
      M.missingExternalData.push_back(R.tensor);
  });
  return Error::success();
}

TensorInfo infoFromType(const onnx::TypeProto &T) {
  TensorInfo I;
  if (!T.has_tensor_type()) return I;
  const auto &TT = T.tensor_type();
  I.elemType = TT.elem_type();
  if (!TT.has_shape()) return I;
  I.hasShape = true;
  for (const auto &D : TT.shape().dim()) {
    if (D.has_dim_value() && D.dim_value() >= 0) {
      I.dims.push_back(D.dim_value());
      I.symbols.emplace_back();
    } else {
      I.dims.push_back(-1);
      I.symbols.push_back(D.has_dim_param() ? D.dim_param() : "");
    }
  }
  return I;
}

TensorInfo infoFromInitializer(const onnx::TensorProto &T) {
  TensorInfo I;
  I.elemType = T.data_type();
  I.hasShape = true;
  for (int64_t D : T.dims()) {
    I.dims.push_back(D);
    I.symbols.emplace_back();
  }
  return I;
}

/// Outer-scope names a subgraph reads (If/Loop/Scan bodies): they are
/// dependencies of the node that owns the subgraph.
void collectOuterReads(const onnx::GraphProto &G, std::unordered_set<std::string> &Local,
                       std::vector<std::string> &Reads) {
  for (const auto &I : G.input()) Local.insert(I.name());
  for (const auto &I : G.initializer()) Local.insert(I.name());
  for (const auto &N : G.node()) {
    for (const std::string &In : N.input())
      if (!In.empty() && !Local.count(In)) Reads.push_back(In);
    for (const auto &A : N.attribute()) {
      if (A.has_g()) {
        auto L = Local;
        collectOuterReads(A.g(), L, Reads);
      }
      for (const auto &Sub : A.graphs()) {
        auto L = Local;
        collectOuterReads(Sub, L, Reads);
      }
    }
    for (const std::string &O : N.output()) Local.insert(O);
  }
}
} // namespace

std::string onnxp::nodeDisplayName(const onnx::GraphProto &G, int Index) {
  const onnx::NodeProto &N = G.node(Index);
  return N.name().empty() ? N.op_type() + "_" + std::to_string(Index) : N.name();
}

std::vector<std::string> onnxp::nodeDataInputs(const onnx::NodeProto &N) {
  std::vector<std::string> Ins;
  for (const std::string &In : N.input())
    if (!In.empty()) Ins.push_back(In);
  for (const auto &A : N.attribute()) {
    std::unordered_set<std::string> Local;
    if (A.has_g()) collectOuterReads(A.g(), Local, Ins);
    for (const auto &Sub : A.graphs()) {
      Local.clear();
      collectOuterReads(Sub, Local, Ins);
    }
  }
  return Ins;
}

namespace {
/// Issue 20: models ONNX Runtime loads are not refused for what it
/// tolerates; each repair is a note (shown as a warning in the summary).
///  - several initializers of one name (a gpt2-with-past export): ORT keeps
///    the last, so do we;
///  - no opset import for the default domain or com.microsoft while nodes
///    use it: the newest opset this ONNX knows (17), com.microsoft 1.
bool isConstantNode(const onnx::NodeProto &N) {
  return N.op_type() == "Constant" && (N.domain().empty() || N.domain() == "ai.onnx") &&
         N.input_size() == 0 && N.output_size() == 1;
}

/// ONNX Runtime turns Constant nodes into initializers on load, and of two
/// that name one tensor keeps the last ("Duplicate initializer ... will use
/// the latest", a GPT-2-with-past export has them): so do we (issue 37).
void dropRepeatedConstants(OnnxModel &M) {
  onnx::GraphProto &G = *M.proto.mutable_graph();
  std::unordered_map<std::string, int> Last, Count;
  for (int I = 0; I < G.node_size(); ++I)
    if (isConstantNode(G.node(I))) {
      Last[G.node(I).output(0)] = I;
      ++Count[G.node(I).output(0)];
    }
  std::vector<int> Dropped;
  for (int I = 0; I < G.node_size(); ++I)
    if (isConstantNode(G.node(I)) && Last[G.node(I).output(0)] != I) Dropped.push_back(I);
  if (Dropped.empty()) return;
  std::string First = G.node(Dropped.front()).output(0);
  // The kept (last) Constant moves to where the first one stood, so every
  // reader still comes after its producer.
  std::unordered_map<std::string, int> FirstAt;
  for (int I : Dropped) FirstAt.emplace(G.node(I).output(0), I);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> Kept;
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    if (!isConstantNode(N) || Count[N.output(0)] == 1) {
      *Kept.Add() = N;
      continue;
    }
    auto F = FirstAt.find(N.output(0));
    if (F != FirstAt.end() && F->second == I) *Kept.Add() = G.node(Last[N.output(0)]);
  }
  G.mutable_node()->Swap(&Kept);
  M.notes.push_back("warning: " + std::to_string(Dropped.size()) +
                    " Constant node(s) produce a tensor another Constant produces ('" + First +
                    "' first); kept the last of each, as ONNX Runtime does");
}

/// "ai.onnx" is an alias of the default domain for ONNX Runtime: an import
/// of it is the default domain's, not a second one (issue 37).
void adoptAiOnnxDomain(OnnxModel &M) {
  bool HasDefault = false;
  int Alias = -1;
  for (int I = 0; I < M.proto.opset_import_size(); ++I) {
    if (M.proto.opset_import(I).domain().empty()) HasDefault = true;
    if (M.proto.opset_import(I).domain() == "ai.onnx") Alias = I;
  }
  if (Alias < 0) return;
  if (!HasDefault) M.proto.mutable_opset_import(Alias)->set_domain("");
  else M.proto.mutable_opset_import()->DeleteSubrange(Alias, 1);
  for (auto &N : *M.proto.mutable_graph()->mutable_node())
    if (N.domain() == "ai.onnx") N.set_domain("");
  M.notes.push_back(
      HasDefault
          ? "the model imports both 'ai.onnx' and the default domain; kept the default domain's version"
          : "the model imports the default domain as 'ai.onnx'; written as the default domain ('')");
}

/// A Constant node naming an initializer: ONNX Runtime 1.30 runs the model
/// with the initializer's value, whatever the node order ("Duplicate
/// initializer (dense, sparse or ConstantNode)"), so the Constant goes
/// (issue 37).
void dropConstantsOfInitializers(OnnxModel &M) {
  onnx::GraphProto &G = *M.proto.mutable_graph();
  std::unordered_set<std::string> Initializers;
  for (const auto &T : G.initializer()) Initializers.insert(T.name());
  int Dropped = 0;
  std::string First;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> Kept;
  for (const auto &N : G.node()) {
    if (!isConstantNode(N) || !Initializers.count(N.output(0))) {
      *Kept.Add() = N;
      continue;
    }
    if (First.empty()) First = N.output(0);
    ++Dropped;
  }
  if (!Dropped) return;
  G.mutable_node()->Swap(&Kept);
  M.notes.push_back("warning: " + std::to_string(Dropped) +
                    " Constant node(s) produce a tensor an initializer holds ('" + First +
                    "' first); kept the initializer, as ONNX Runtime does");
}

void repairWhatOrtAccepts(OnnxModel &M) {
  onnx::GraphProto &G = *M.proto.mutable_graph();
  std::unordered_map<std::string, int> Last;
  for (int I = 0; I < G.initializer_size(); ++I) Last[G.initializer(I).name()] = I;
  if ((int)Last.size() != G.initializer_size()) {
    int Dropped = 0;
    std::string First;
    auto *Inits = G.mutable_initializer();
    google::protobuf::RepeatedPtrField<onnx::TensorProto> Kept;
    for (int I = 0; I < Inits->size(); ++I) {
      if (Last[Inits->Get(I).name()] == I) {
        *Kept.Add() = Inits->Get(I);
      } else {
        if (First.empty()) First = Inits->Get(I).name();
        ++Dropped;
      }
    }
    Inits->Swap(&Kept);
    M.notes.push_back("warning: " + std::to_string(Dropped) + " initializer(s) repeat a name ('" + First +
                      "' first); kept the last of each, as ONNX Runtime does");
  }
  dropRepeatedConstants(M);
  dropConstantsOfInitializers(M);
  adoptAiOnnxDomain(M);
  std::set<std::string> Imported, Used;
  for (const auto &O : M.proto.opset_import()) Imported.insert(O.domain());
  for (const auto &N : G.node()) Used.insert(N.domain() == "ai.onnx" ? "" : N.domain());
  for (const auto &D : {std::pair<const char *, int>{"", 17}, {"com.microsoft", 1}}) {
    if (!Used.count(D.first) || Imported.count(D.first)) continue;
    auto *Op = M.proto.add_opset_import();
    Op->set_domain(D.first);
    Op->set_version(D.second);
    M.notes.push_back(std::string("the model imports no opset for the ") +
                      (*D.first ? "'com.microsoft'" : "default") + " domain its nodes use; assumed version " +
                      std::to_string(D.second));
  }
}
} // namespace

Expected<OnnxModel> onnxp::loadOnnxModel(const std::string &Path, const std::string &Contents) {
  OnnxModel M;
  M.path = Path;
  if (looksLikeOnnxText(Contents)) {
    M.format = "text";
    ONNXP_RETURN_IF_ERROR(checkTextNesting(Contents, Path));
    // ONNX 1.12's parser throws std::invalid_argument / out_of_range from
    // std::stoll and friends on malformed numbers (found by fuzz-onnx-text).
    auto Parse = [&](auto &Proto) -> onnx::Common::Status {
      try {
        return onnx::OnnxParser::Parse(Proto, Contents.c_str());
      } catch (const std::exception &Ex) {
        return onnx::Common::Status(onnx::Common::NONE, onnx::Common::FAIL,
                                    std::string("malformed number or literal (") + Ex.what() + ")");
      }
    };
    onnx::Common::Status S = Parse(M.proto);
    if (!S.IsOK()) {
      // A bare graph (no <...> header) is accepted too, with opset 18 defaults.
      onnx::GraphProto G;
      onnx::Common::Status SG = Parse(G);
      if (!SG.IsOK()) return makeError(Path, ": cannot parse ONNX text: ", S.ErrorMessage());
      M.proto = onnx::ModelProto();
      *M.proto.mutable_graph() = G;
      M.proto.set_ir_version(8);
      auto *Op = M.proto.add_opset_import();
      Op->set_domain("");
      Op->set_version(17);
    }
    if (M.proto.ir_version() == 0) M.proto.set_ir_version(8);
  } else {
    M.format = "binary";
    if (Contents.empty()) return makeError(Path, ": file is empty, not an ONNX model");
    if (!M.proto.ParseFromString(Contents))
      return makeError(Path, ": not an ONNX model (the protobuf does not parse: truncated or not ONNX)");
    if (!M.proto.has_graph() || M.proto.ir_version() <= 0 || M.proto.ir_version() > 100)
      return makeError(Path, ": not an ONNX model (no graph or no valid ir_version)");
  }
  if (M.graph().node_size() == 0) return makeError(Path, ": the model's graph has no nodes");
  repairWhatOrtAccepts(M);
  // Opsets 18-21 become their opset-17 form before anything checks or
  // infers them (issue 37, item 1; OpsetLowering.h).
  Expected<OpsetLoweringResult> Lowered = lowerOpsets(M.proto, Path);
  if (!Lowered) return Lowered.takeError();
  M.notes.insert(M.notes.end(), Lowered->notes.begin(), Lowered->notes.end());
  ONNXP_RETURN_IF_ERROR(checkExternalLocations(M.proto, Path));
  ONNXP_RETURN_IF_ERROR(validateForShapeInference(M.proto, Path));
  // value_info entries without a type say nothing, and the checker rejects
  // them (ort_gpt2_one_layer has some): drop them rather than fail at write.
  auto *VIs = M.proto.mutable_graph()->mutable_value_info();
  int Before = VIs->size();
  VIs->erase(
      std::remove_if(VIs->begin(), VIs->end(), [](const onnx::ValueInfoProto &V) { return !V.has_type(); }),
      VIs->end());
  if (VIs->size() != Before)
    M.notes.push_back("dropped " + std::to_string(Before - VIs->size()) +
                      " value_info entries without a type (the ONNX checker requires one)");
  // ONNX Runtime accepts node lists out of order; ONNX's checker and every
  // pass here want them sorted, so sort once on import.
  if (sortNodesTopologically(*M.proto.mutable_graph()))
    M.notes.push_back("the model's node list was not topologically sorted; nodes were reordered on import");
  ONNXP_RETURN_IF_ERROR(openExternalData(M));
  for (const auto &I : M.graph().initializer()) M.tensors[I.name()] = infoFromInitializer(I);
  for (const auto &I : M.graph().input())
    if (!M.tensors.count(I.name())) M.tensors[I.name()] = infoFromType(I.type());
  return M;
}

Error onnxp::checkGraphStructure(const OnnxModel &M) {
  const onnx::GraphProto &G = M.graph();
  std::unordered_map<std::string, int> Producer;
  std::unordered_set<std::string> Available;
  for (const auto &I : G.input()) Available.insert(I.name());
  for (const auto &I : G.initializer()) Available.insert(I.name());
  for (int N = 0; N < G.node_size(); ++N)
    for (const std::string &O : G.node(N).output()) {
      if (O.empty()) continue;
      if (!Producer.emplace(O, N).second)
        return makeError(M.path, ": tensor '", O, "' is produced by two nodes ('",
                         nodeDisplayName(G, Producer[O]), "' and '", nodeDisplayName(G, N), "')");
    }
  std::vector<std::vector<int>> Succ(G.node_size());
  std::vector<int> InDeg(G.node_size(), 0);
  for (int N = 0; N < G.node_size(); ++N) {
    for (const std::string &In : nodeDataInputs(G.node(N))) {
      auto P = Producer.find(In);
      if (P != Producer.end()) {
        Succ[P->second].push_back(N);
        ++InDeg[N];
        continue;
      }
      if (!Available.count(In))
        return makeError(M.path, ": node '", nodeDisplayName(G, N), "' (", G.node(N).op_type(),
                         ") reads tensor '", In,
                         "' that no node, graph input or initializer provides (dangling input)");
    }
  }
  for (const auto &O : G.output())
    if (!Producer.count(O.name()) && !Available.count(O.name()))
      return makeError(M.path, ": graph output '", O.name(), "' is produced by no node");
  std::queue<int> Ready;
  for (int N = 0; N < G.node_size(); ++N)
    if (InDeg[N] == 0) Ready.push(N);
  int Seen = 0;
  while (!Ready.empty()) {
    int N = Ready.front();
    Ready.pop();
    ++Seen;
    for (int S : Succ[N])
      if (--InDeg[S] == 0) Ready.push(S);
  }
  if (Seen != G.node_size())
    for (int N = 0; N < G.node_size(); ++N)
      if (InDeg[N] > 0)
        return makeError(M.path, ": the graph has a cycle through node '", nodeDisplayName(G, N), "' (",
                         G.node(N).op_type(), ")");
  return Error::success();
}

namespace {
/// Base tensor whose shape a gradient tensor shares under ONNX Runtime's
/// naming (models/README.md): X_grad, X_grad_0 (partial sums),
/// P_grad.accumulation.buffer / .out.
std::string gradientBase(const std::string &Name) {
  for (const char *Suffix : {"_grad.accumulation.buffer", "_grad.accumulation.out"}) {
    size_t L = std::strlen(Suffix);
    if (Name.size() > L && Name.compare(Name.size() - L, L, Suffix) == 0)
      return Name.substr(0, Name.size() - L);
  }
  size_t Pos = Name.rfind("_grad");
  if (Pos == std::string::npos || Pos == 0) return "";
  std::string Rest = Name.substr(Pos + 5);
  if (Rest.empty()) return Name.substr(0, Pos);
  if (Rest[0] == '_' && Rest.size() > 1 && Rest.find_first_not_of("0123456789", 1) == std::string::npos)
    return Name.substr(0, Pos);
  return "";
}
} // namespace

namespace {
/// Issue 37, item 2: a graph output or value_info whose declared shape
/// contradicts the inferred one (Inferred: the graph inference wrote back;
/// see SafeShapeInference) is written as inferred: the contradicting dims
/// take the inferred values (the rest stay as declared, symbols included),
/// another rank the inferred type.
void adoptContradictedShapes(onnx::ModelProto &M, const onnx::GraphProto &Inferred) {
  std::unordered_map<std::string, const onnx::TypeProto *> Types;
  for (const auto *List : {&Inferred.value_info(), &Inferred.output()})
    for (const auto &VI : *List) Types[VI.name()] = &VI.type();
  auto Adopt = [&](onnx::ValueInfoProto &VI) {
    auto It = Types.find(VI.name());
    if (It == Types.end() || shapeContradiction(VI.type(), *It->second).empty()) return;
    auto *Have = VI.mutable_type()->mutable_tensor_type()->mutable_shape();
    const auto &Want = It->second->tensor_type().shape();
    if (Have->dim_size() != Want.dim_size()) {
      *VI.mutable_type() = *It->second;
      return;
    }
    for (int D = 0; D < Want.dim_size(); ++D)
      if (Have->dim(D).has_dim_value() && Want.dim(D).has_dim_value())
        Have->mutable_dim(D)->set_dim_value(Want.dim(D).dim_value());
  };
  for (auto &VI : *M.mutable_graph()->mutable_output()) Adopt(VI);
  for (auto &VI : *M.mutable_graph()->mutable_value_info()) Adopt(VI);
}

/// Binds symbolic dims on graph inputs (and outputs/value_info, so
/// inference does not merge a bound dim with a stale symbol).
void bindDims(const OnnxModel &M, onnx::GraphProto *G) {
  auto Bind = [&](onnx::ValueInfoProto &VI) {
    if (!VI.type().has_tensor_type() || !VI.type().tensor_type().has_shape()) return;
    for (auto &D : *VI.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!D.has_dim_param()) continue;
      // Expressions over bound names (ORT's `16*batch`) are bound too.
      if (std::optional<int64_t> V = evaluateDim(D.dim_param(), M.dimBindings)) D.set_dim_value(*V);
    }
  };
  for (auto &VI : *G->mutable_input()) Bind(VI);
  for (auto &VI : *G->mutable_output()) Bind(VI);
  for (auto &VI : *G->mutable_value_info()) Bind(VI);
}

/// Graph outputs without a type get the inferred element type and rank.
void typeGraphOutputs(OnnxModel &M, const onnx::GraphProto *G) {
  // Graph outputs without a type fail the checker at write time; give them
  // the inferred element type and rank (dims left open: their values may
  // depend on this run's --dim bindings).
  int Typed = 0;
  for (int I = 0; I < M.proto.graph().output_size() && I < G->output_size(); ++I) {
    onnx::ValueInfoProto &Out = *M.proto.mutable_graph()->mutable_output(I);
    const onnx::TypeProto &Inferred = G->output(I).type();
    if (Out.has_type() || !Inferred.has_tensor_type() || Inferred.tensor_type().elem_type() == 0) continue;
    auto *T = Out.mutable_type()->mutable_tensor_type();
    T->set_elem_type(Inferred.tensor_type().elem_type());
    if (Inferred.tensor_type().has_shape()) {
      auto *S = T->mutable_shape();
      for (int D = 0; D < Inferred.tensor_type().shape().dim_size(); ++D) S->add_dim();
    }
    ++Typed;
  }
  M.untypedOutputs.clear();
  for (const auto &Out : M.proto.graph().output())
    if (!Out.type().has_tensor_type() || Out.type().tensor_type().elem_type() == 0)
      if (!Out.type().has_sequence_type() && !Out.type().has_map_type() && !Out.type().has_optional_type())
        M.untypedOutputs.push_back(Out.name());
  if (Typed)
    M.notes.push_back(
        "gave " + std::to_string(Typed) +
        " graph outputs without a type their inferred element type (the ONNX checker requires one)");
}

/// Tensor infos from the inferred copy, completed from gradient naming.
void collectTensorInfos(OnnxModel &M, const onnx::GraphProto *G) {
  M.tensors.clear();
  M.nonTensorValues.clear();
  for (const auto &I : G->initializer()) M.tensors[I.name()] = infoFromInitializer(I);
  for (const auto *List : {&G->input(), &G->value_info(), &G->output()})
    for (const auto &VI : *List) {
      const onnx::TypeProto &T = VI.type();
      if (T.has_sequence_type() || T.has_map_type() || T.has_optional_type())
        M.nonTensorValues.insert(VI.name());
      TensorInfo Info = infoFromType(VI.type());
      auto [It, New] = M.tensors.try_emplace(VI.name(), Info);
      if (!New && !It->second.fullyKnown() && Info.fullyKnown()) It->second = Info;
    }
  // Complete what ONNX cannot infer (com.microsoft training ops) from
  // gradient naming; repeat because bases may themselves be gradients.
  for (int Round = 0; Round < 3; ++Round)
    for (const auto &N : G->node())
      for (const std::string &O : N.output()) {
        if (O.empty()) continue;
        const TensorInfo *Cur = M.tensor(O);
        if (Cur && Cur->fullyKnown()) continue;
        std::string Base = gradientBase(O);
        const TensorInfo *B = Base.empty() ? nullptr : M.tensor(Base);
        if (B && B->hasShape) M.tensors[O] = *B;
      }
}

/// What inference left unsized, estimated from its producer.
void estimateUnsized(OnnxModel &M, const onnx::GraphProto *G) {
  M.unknownShapeTensors.clear();
  M.estimatedShapeTensors.clear();
  // What inference left unsized is estimated from its producer (issue 23):
  // the shape of the producer's largest sized input, so an elementwise or
  // movement op is exact and nothing counts a silent 0. Nodes are in
  // topological order here (inferShapesSafely sorted the copy), so an
  // estimate can feed the next one.
  for (const auto &N : G->node())
    for (const std::string &O : N.output()) {
      if (O.empty()) continue;
      const TensorInfo *I = M.tensor(O);
      if (I && I->fullyKnown() && elementBytes(I->elemType) != 0) continue;
      M.unknownShapeTensors.push_back(O);
      const TensorInfo *Largest = nullptr;
      double Most = -1;
      for (const std::string &In : N.input()) {
        const TensorInfo *T = In.empty() ? nullptr : M.tensor(In);
        std::optional<double> E = T ? T->numElements() : std::nullopt;
        if (E && *E > Most) Most = *E, Largest = T;
      }
      if (!Largest) continue;
      TensorInfo Est = *Largest;
      if (I && elementBytes(I->elemType) != 0) Est.elemType = I->elemType;
      if (elementBytes(Est.elemType) == 0) Est.elemType = onnx::TensorProto::FLOAT;
      M.tensors[O] = Est;
      M.estimatedShapeTensors.push_back(O);
    }
}

/// The dim names no --dim binds.
void collectUnboundDims(OnnxModel &M) {
  M.unboundDims.clear();
  // Ask for the names an expression uses, never for the expression.
  for (auto &[Name, Info] : M.tensors)
    for (const std::string &S : Info.symbols) {
      if (S.empty()) continue;
      bool Added = false;
      for (const std::string &N : dimNames(S))
        if (!M.dimBindings.count(N)) Added = M.unboundDims.insert(N).second || true;
      if (!Added) M.unboundDims.insert(S);
    }
}
} // namespace

Error onnxp::inferShapes(OnnxModel &M) {
  // External initializers as inputs: ONNX cannot read their data anyway.
  onnx::ModelProto Copy = withoutExternalData(M.proto);
  onnx::GraphProto *G = Copy.mutable_graph();
  bindDims(M, G);
  ONNXP_RETURN_IF_ERROR(inferShapesSafely(Copy, M.path, M.notes));
  adoptContradictedShapes(M.proto, *G);
  typeGraphOutputs(M, G);
  collectTensorInfos(M, G);
  estimateUnsized(M, G);
  collectUnboundDims(M);
  return Error::success();
}

Expected<std::string> onnxp::serializeModel(const OnnxModel &M) {
  std::string Out;
  if (!M.proto.SerializeToString(&Out)) return makeError(M.path, ": cannot serialize the model");
  return Out;
}
