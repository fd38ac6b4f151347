//===- IR/OpsetLowering.cpp - Opsets 18-21 in their opset-17 form ---------===//
//
// What each default-domain opset after 17 changed (onnx/docs/Changelog.md,
// onnx/defs/operator_sets.h) and what this file does with it:
//
//  18  Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}: 'axes'
//      an input -> the attribute when the input is constant (an initializer
//      or Constant); none or empty -> reduce all, or under
//      noop_with_empty_axes the element-wise part alone (Identity, Abs, Log,
//      x * x), as ONNX Runtime computes it. Split: 'num_outputs' ->
//      Split-13 with 'split' sizes (the dim known) or its equal split. Pad: an 'axes' input ->
//      full-rank pads when pads, axes and rank are known. Resize: antialias,
//      axes, keep_aspect_ratio_policy at their defaults. ScatterElements,
//      ScatterND: reduction none/add/mul (max/min are new). LpPool:
//      ceil_mode and dilations at their defaults. OptionalHasElement/
//      OptionalGetElement: on an optional (a plain tensor is new).
//      New ops (BitwiseAnd/Or/Xor/Not, CenterCropPad, Col2Im,
//      GroupNormalization): refused, named. Mish: its definition,
//      x tanh(softplus(x)).
//  19  AveragePool: dilations all 1. Cast, CastLike, QuantizeLinear:
//      'saturate' only matters for FLOAT8 targets, which the IR-version check
//      refuses (IrVersion.h): dropped. Resize: not half_pixel_symmetric.
//      Pad: not mode 'wrap'. Equal: not on strings. Constant,
//      DequantizeLinear, Identity, If, Loop, Reshape, Scan, Shape, Size:
//      FLOAT8 types only. DeformConv: new, refused.
//  20  GridSample: 'linear'/'cubic' are 16's 'bilinear'/'bicubic', 4-D only.
//      ReduceMax/ReduceMin: not on bool. ConstantOfShape, IsInf, IsNaN:
//      FLOAT8 types only. Gelu: its definition (Erf, or Tanh for
//      approximate='tanh'). DFT (axis an input), AffineGrid, ImageDecoder,
//      RegexFullMatch, StringConcat, StringSplit: refused.
//  21  Cast, CastLike, Constant, ConstantOfShape, Flatten, Identity, If,
//      Loop, Pad, QLinearMatMul, Reshape, Scan, Shape, Size, Squeeze,
//      Transpose, Unsqueeze: INT4/UINT4 (and FLOAT8) types only.
//      QuantizeLinear/DequantizeLinear: block_size 0, output_dtype 0.
//      GroupNormalization: refused.
//  ai.onnx.ml 4 LabelEncoder's tensor attributes, 5 TreeEnsemble: refused;
//      every other ml op is unchanged since ai.onnx.ml 3.
//
// Element types newer than IR 8 are refused by checkIrVersion with the
// construct named, so an op whose only change was such types lowers as is.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/OpsetLowering.h"

#include "ShapeDataPropagation.h"

#include <onnx/defs/schema.h>

#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {
/// The opsets the lowering writes: ONNX 1.12's newest.
constexpr int kTargetOpset = 17;
constexpr int kTargetMlOpset = 3;
constexpr int kMaxLoweredMlOpset = 5;
/// Axes, pads and split sizes are short; a longer "constant" is not read.
constexpr int64_t kMaxConstInts = 4096;

const char *const kExportHint = "ONNX Runtime runs it, the ONNX checker here knows opsets <= 17: export the "
                                "model at opset 17 to partition it";

int checkerOpset(const std::string &Domain) {
  const auto &Map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto It = Map.find(Domain);
  return It == Map.end() ? 0 : It->second.second;
}

bool isDefaultDomain(const std::string &D) { return D.empty() || D == "ai.onnx"; }

std::string stringAttr(const onnx::NodeProto &N, const char *Name, const std::string &Default) {
  const onnx::AttributeProto *A = findNodeAttribute(N, Name);
  return A ? A->s() : Default;
}

/// Removes attribute Name; whether it was there.
bool dropAttr(onnx::NodeProto &N, const char *Name) {
  auto *Attrs = N.mutable_attribute();
  for (int I = 0; I < Attrs->size(); ++I)
    if (Attrs->Get(I).name() == Name) {
      Attrs->DeleteSubrange(I, 1);
      return true;
    }
  return false;
}

bool allOnes(const onnx::AttributeProto *A) {
  if (!A) return true;
  for (int64_t V : A->ints())
    if (V != 1) return false;
  return true;
}

/// The values of a small INT64 or INT32 tensor held in the model.
std::optional<std::vector<int64_t>> tensorInts(const onnx::TensorProto &T) {
  if (T.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  int64_t Count = 1;
  for (int64_t D : T.dims()) {
    if (D < 0 || D > kMaxConstInts) return std::nullopt;
    Count *= D;
    if (Count > kMaxConstInts) return std::nullopt;
  }
  std::vector<int64_t> V;
  if (T.data_type() == onnx::TensorProto::INT64) {
    if (!T.raw_data().empty()) {
      if (static_cast<int64_t>(T.raw_data().size()) != Count * 8) return std::nullopt;
      V.resize(Count);
      std::memcpy(V.data(), T.raw_data().data(), T.raw_data().size()); // raw_data is little-endian
    } else {
      V.assign(T.int64_data().begin(), T.int64_data().end());
    }
  } else if (T.data_type() == onnx::TensorProto::INT32) {
    if (!T.raw_data().empty()) {
      if (static_cast<int64_t>(T.raw_data().size()) != Count * 4) return std::nullopt;
      std::vector<int32_t> W(Count);
      std::memcpy(W.data(), T.raw_data().data(), T.raw_data().size());
      V.assign(W.begin(), W.end());
    } else {
      V.assign(T.int32_data().begin(), T.int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(V.size()) != Count) return std::nullopt;
  return V;
}

/// What the model declares about a tensor (graph inputs, outputs,
/// value_info, initializers); dims -1 where unknown.
struct Declared {
  int32_t elem = 0;
  bool optional = false;
  bool hasRank = false;
  std::vector<int64_t> dims;
};

Declared fromType(const onnx::TypeProto &T) {
  Declared D;
  if (T.has_optional_type()) {
    D.optional = true;
    return D;
  }
  if (!T.has_tensor_type()) return D;
  D.elem = T.tensor_type().elem_type();
  if (!T.tensor_type().has_shape()) return D;
  D.hasRank = true;
  for (const auto &Dim : T.tensor_type().shape().dim())
    D.dims.push_back(Dim.has_dim_value() && Dim.dim_value() >= 0 ? Dim.dim_value() : -1);
  return D;
}

/// As the import's other checks name a node (SafeShapeInference.cpp).
std::string describe(const onnx::NodeProto &N, int Index) {
  std::string Name = N.name().empty() ? N.op_type() + "_" + std::to_string(Index) : N.name();
  return "node '" + Name + "' (" + N.op_type() + ")";
}

bool isReduceWithAxesInput(const std::string &Op) {
  static const std::unordered_set<std::string> Ops = {"ReduceL1",        "ReduceL2",   "ReduceLogSum",
                                                      "ReduceLogSumExp", "ReduceMax",  "ReduceMean",
                                                      "ReduceMin",       "ReduceProd", "ReduceSumSquare"};
  return Ops.count(Op) > 0;
}

/// Default-domain ops ONNX 1.12 does not know, with the opset that added
/// them: they have no opset-17 form here.
int newOpSince(const std::string &Op) {
  static const std::unordered_map<std::string, int> Ops = {
      {"BitwiseAnd", 18},    {"BitwiseOr", 18},    {"BitwiseXor", 18},         {"BitwiseNot", 18},
      {"CenterCropPad", 18}, {"Col2Im", 18},       {"GroupNormalization", 18}, {"DeformConv", 19},
      {"AffineGrid", 20},    {"ImageDecoder", 20}, {"RegexFullMatch", 20},     {"StringConcat", 20},
      {"StringSplit", 20}};
  auto It = Ops.find(Op);
  return It == Ops.end() ? 0 : It->second;
}

/// Rewrites the nodes of one opset scope (the model's graphs, or one
/// function's body) from opset From to kTargetOpset.
class Lowerer {
public:
  Lowerer(std::string What, int From, int MlFrom) : What(std::move(What)), From(From), MlFrom(MlFrom) {}

  int rewritten() const { return Rewritten; }
  int unknownDimSplits() const { return UnknownDimSplits; }

  /// Constants and declared types of G and the graphs nested in it (names
  /// are unique across nested scopes, ONNX IR.md "Names Within a Graph").
  void learnGraph(const onnx::GraphProto &G) {
    std::unordered_set<std::string> Inputs;
    for (const auto *List : {&G.input(), &G.output(), &G.value_info()})
      for (const auto &VI : *List) {
        Names.insert(VI.name());
        if (VI.has_type()) Types[VI.name()] = fromType(VI.type());
      }
    for (const auto &VI : G.input()) Inputs.insert(VI.name());
    for (const auto &T : G.initializer()) {
      Names.insert(T.name());
      if (!Types.count(T.name())) {
        Declared D;
        D.elem = T.data_type();
        D.hasRank = true;
        D.dims.assign(T.dims().begin(), T.dims().end());
        Types[T.name()] = D;
      }
      // A graph input of the same name overrides the initializer at run time.
      if (Inputs.count(T.name())) continue;
      if (auto V = tensorInts(T)) Ints[T.name()] = std::move(*V);
    }
    learnNodes(G.node());
  }

  void learnNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes) {
    for (const auto &N : Nodes) {
      for (const auto &O : N.output()) Names.insert(O);
      if (N.op_type() == "Constant" && isDefaultDomain(N.domain()) && N.output_size() == 1) learnConstant(N);
      for (const auto &A : N.attribute()) {
        if (A.has_g()) learnGraph(A.g());
        for (const auto &Sub : A.graphs()) learnGraph(Sub);
      }
    }
  }

  Error lowerNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes, const std::string &Scope) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> Out;
    int Index = 0;
    for (auto &N : Nodes) {
      std::string Where = describe(N, Index++) + Scope;
      for (auto &A : *N.mutable_attribute()) {
        std::string Inner = " (in a body of " + Where + ")";
        if (A.has_g()) ONNXP_RETURN_IF_ERROR(lowerNodes(*A.mutable_g()->mutable_node(), Inner));
        for (auto &Sub : *A.mutable_graphs()) ONNXP_RETURN_IF_ERROR(lowerNodes(*Sub.mutable_node(), Inner));
      }
      std::vector<onnx::NodeProto> Before;
      bool Changed = false;
      if (From > kTargetOpset && isDefaultDomain(N.domain()))
        ONNXP_RETURN_IF_ERROR(lowerDefault(N, Before, Where, Changed));
      else if (MlFrom > kTargetMlOpset && N.domain() == "ai.onnx.ml")
        ONNXP_RETURN_IF_ERROR(lowerMl(N, Where));
      Rewritten += Changed;
      for (auto &B : Before) *Out.Add() = std::move(B);
      *Out.Add() = std::move(N);
    }
    Nodes.Swap(&Out);
    return Error::success();
  }

  /// Constants a lowered node stopped reading, dropped from G (and the
  /// graphs nested in it) when nothing else reads them.
  void dropOrphans(onnx::GraphProto &G) {
    if (Orphans.empty()) return;
    std::unordered_set<std::string> Read;
    collectReads(G, Read);
    dropOrphansIn(G, Read);
  }

  void dropOrphanNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes,
                       const std::unordered_set<std::string> &Read) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> Kept;
    for (auto &N : Nodes) {
      bool Orphan = N.op_type() == "Constant" && N.output_size() == 1 && Orphans.count(N.output(0)) &&
                    !Read.count(N.output(0));
      if (!Orphan) *Kept.Add() = std::move(N);
    }
    Nodes.Swap(&Kept);
  }

  static void collectReads(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes,
                           std::unordered_set<std::string> &Read) {
    for (const auto &N : Nodes) {
      Read.insert(N.input().begin(), N.input().end());
      for (const auto &A : N.attribute()) {
        if (A.has_g()) collectReads(A.g(), Read);
        for (const auto &Sub : A.graphs()) collectReads(Sub, Read);
      }
    }
  }

private:
  std::string What;
  int From, MlFrom;
  int Rewritten = 0, UnknownDimSplits = 0;
  std::unordered_map<std::string, std::vector<int64_t>> Ints;
  std::unordered_map<std::string, Declared> Types;
  std::unordered_set<std::string> Names, Orphans;

  static void collectReads(const onnx::GraphProto &G, std::unordered_set<std::string> &Read) {
    for (const auto &O : G.output()) Read.insert(O.name());
    collectReads(G.node(), Read);
  }

  void dropOrphansIn(onnx::GraphProto &G, const std::unordered_set<std::string> &Read) {
    std::unordered_set<std::string> Inputs;
    for (const auto &VI : G.input()) Inputs.insert(VI.name());
    auto *Inits = G.mutable_initializer();
    for (int I = Inits->size() - 1; I >= 0; --I) {
      const std::string &Name = Inits->Get(I).name();
      if (Orphans.count(Name) && !Read.count(Name) && !Inputs.count(Name)) Inits->DeleteSubrange(I, 1);
    }
    dropOrphanNodes(*G.mutable_node(), Read);
    for (auto &N : *G.mutable_node())
      for (auto &A : *N.mutable_attribute()) {
        if (A.has_g()) dropOrphansIn(*A.mutable_g(), Read);
        for (auto &Sub : *A.mutable_graphs()) dropOrphansIn(Sub, Read);
      }
  }

  void learnConstant(const onnx::NodeProto &N) {
    for (const auto &A : N.attribute()) {
      if (A.name() == "value" && A.has_t()) {
        if (auto V = tensorInts(A.t())) Ints[N.output(0)] = std::move(*V);
        Declared D;
        D.elem = A.t().data_type();
        D.hasRank = true;
        D.dims.assign(A.t().dims().begin(), A.t().dims().end());
        Types.emplace(N.output(0), D);
      } else if (A.name() == "value_ints" && A.ints_size() <= kMaxConstInts) {
        Ints[N.output(0)].assign(A.ints().begin(), A.ints().end());
      } else if (A.name() == "value_int") {
        Ints[N.output(0)] = {A.i()};
      }
    }
  }

  Error refuse(const std::string &Where, const std::string &Why) const {
    return makeError(What, ": ", Where, ": ", Why, " (", kExportHint, ")");
  }

  /// A fresh tensor name from Base.
  std::string freshName(const std::string &Base) {
    std::string Name = Base;
    for (int I = 1; Names.count(Name); ++I) Name = Base + "_" + std::to_string(I);
    Names.insert(Name);
    return Name;
  }

  /// A Constant node holding Values (INT64, 1-D), named after N.
  onnx::NodeProto intsConstant(const onnx::NodeProto &N, const std::string &Tag,
                               const std::vector<int64_t> &Values) {
    onnx::NodeProto C;
    C.set_op_type("Constant");
    std::string Out = freshName((N.output_size() ? N.output(0) : N.op_type()) + "_" + Tag);
    C.set_name(Out);
    C.add_output(Out);
    auto *A = C.add_attribute();
    A->set_name("value");
    A->set_type(onnx::AttributeProto::TENSOR);
    auto *T = A->mutable_t();
    T->set_data_type(onnx::TensorProto::INT64);
    T->add_dims(static_cast<int64_t>(Values.size()));
    for (int64_t V : Values) T->add_int64_data(V);
    return C;
  }

  const Declared *declared(const onnx::NodeProto &N, int Input) const {
    if (Input >= N.input_size() || N.input(Input).empty()) return nullptr;
    auto It = Types.find(N.input(Input));
    return It == Types.end() ? nullptr : &It->second;
  }

  const std::vector<int64_t> *constInts(const std::string &Name) const {
    auto It = Ints.find(Name);
    return It == Ints.end() ? nullptr : &It->second;
  }

  void dropInputsFrom(onnx::NodeProto &N, int First) {
    while (N.input_size() > First) {
      if (!N.input(N.input_size() - 1).empty()) Orphans.insert(N.input(N.input_size() - 1));
      N.mutable_input()->RemoveLast();
    }
  }

  Error lowerDefault(onnx::NodeProto &N, std::vector<onnx::NodeProto> &Before, const std::string &Where,
                     bool &Changed) {
    const std::string Op = N.op_type();
    if (int Since = newOpSince(Op); Since && Since <= From)
      return refuse(Where, Op + " is new in opset " + std::to_string(Since) + " and has no opset-17 form");
    if (isReduceWithAxesInput(Op)) return lowerReduce(N, Where, Changed);
    if ((Op == "Gelu" && From >= 20) || (Op == "Mish" && From >= 18)) {
      if (N.input_size() != 1 || N.input(0).empty() || N.output_size() != 1)
        return makeError(What, ": ", Where, ": ", Op, " takes one input and gives one output");
      Changed = true;
      return Op == "Gelu" ? lowerGelu(N, Before, Where) : lowerMish(N, Before);
    }
    if (Op == "Split") return lowerSplit(N, Before, Where, Changed);
    if (Op == "Pad") return lowerPad(N, Before, Where, Changed);
    if (Op == "Resize") return lowerResize(N, Where, Changed);
    if (Op == "GridSample" && From >= 20) return lowerGridSample(N, Where, Changed);
    if (Op == "DFT" && From >= 20)
      return refuse(Where, "DFT-20 takes 'axis' as an input with another default; its opset-17 form is not "
                           "derived here");
    if (Op == "ScatterElements" || Op == "ScatterND") {
      std::string R = stringAttr(N, "reduction", "none");
      if (R == "max" || R == "min")
        return refuse(Where, Op + "-18 with reduction='" + R +
                                 "' has no opset-17 form (opset 16-17 reduce with none, add or mul)");
      return Error::success();
    }
    return lowerAttributesOnly(N, Where, Changed);
  }

  /// Ops whose change was an attribute that keeps the old meaning at its
  /// default, or element types the IR check refuses.
  Error lowerAttributesOnly(onnx::NodeProto &N, const std::string &Where, bool &Changed) {
    const std::string &Op = N.op_type();
    if (Op == "Cast" || Op == "CastLike") {
      // 'saturate' (19) only acts on FLOAT8 targets (refused by checkIrVersion).
      Changed |= dropAttr(N, "saturate");
    } else if (Op == "QuantizeLinear" || Op == "DequantizeLinear") {
      for (const char *Name : {"block_size", "output_dtype"})
        if (nodeIntAttribute(N, Name, 0) != 0)
          return refuse(Where, Op + "-21 with " + Name + "=" + std::to_string(nodeIntAttribute(N, Name, 0)) +
                                   " has no opset-17 form");
      for (const char *Name : {"saturate", "block_size", "output_dtype"}) Changed |= dropAttr(N, Name);
    } else if (Op == "AveragePool" && From >= 19) {
      if (!allOnes(findNodeAttribute(N, "dilations")))
        return refuse(Where, "AveragePool-19 with dilations other than 1 has no opset-17 form");
      Changed |= dropAttr(N, "dilations");
    } else if (Op == "LpPool") {
      if (!allOnes(findNodeAttribute(N, "dilations")) || nodeIntAttribute(N, "ceil_mode", 0) != 0)
        return refuse(Where, "LpPool-18 with dilations or ceil_mode has no opset-17 form");
      Changed |= dropAttr(N, "dilations");
      Changed |= dropAttr(N, "ceil_mode");
    } else if (Op == "Equal" && From >= 19) {
      for (int I = 0; I < 2; ++I)
        if (const Declared *D = declared(N, I); D && D->elem == onnx::TensorProto::STRING)
          return refuse(Where, "Equal-19 on strings has no opset-17 form");
    } else if (Op == "OptionalHasElement" || Op == "OptionalGetElement") {
      if (const Declared *D = declared(N, 0); D && !D->optional && D->elem != 0)
        return refuse(Where, Op + "-18 on a plain tensor (not an optional) has no opset-17 form");
    }
    return Error::success();
  }

  /// A node Type reading Ins, put before the lowered node; its output.
  std::string before(std::vector<onnx::NodeProto> &Before, const onnx::NodeProto &N, const std::string &Tag,
                     const char *Type, const std::vector<std::string> &Ins) {
    onnx::NodeProto B;
    B.set_op_type(Type);
    std::string Out = freshName(N.output(0) + "_" + Tag);
    B.set_name(Out);
    for (const std::string &In : Ins) B.add_input(In);
    B.add_output(Out);
    Before.push_back(std::move(B));
    return Out;
  }

  /// A float scalar in the element type of tensor Like (CastLike, opset 15).
  std::string scalarLike(std::vector<onnx::NodeProto> &Before, const onnx::NodeProto &N,
                         const std::string &Tag, float Value, const std::string &Like) {
    std::string C = before(Before, N, Tag, "Constant", {});
    auto *A = Before.back().add_attribute();
    A->set_name("value");
    A->set_type(onnx::AttributeProto::TENSOR);
    A->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    A->mutable_t()->add_float_data(Value);
    return before(Before, N, Tag + "_cast", "CastLike", {C, Like});
  }

  /// N becomes the last node of its expansion: Final(Ins), same output.
  static void becomeLast(onnx::NodeProto &N, const char *Final, const std::vector<std::string> &Ins) {
    N.set_op_type(Final);
    N.clear_attribute();
    N.clear_input();
    for (const std::string &In : Ins) N.add_input(In);
  }

  /// Gelu-20 as its definition (Changelog, Gelu-20): 0.5 x (1 + erf(x /
  /// sqrt 2)), or with approximate='tanh' 0.5 x (1 + tanh(sqrt(2 / pi)
  /// (x + 0.044715 x^3))).
  Error lowerGelu(onnx::NodeProto &N, std::vector<onnx::NodeProto> &Before, const std::string &Where) {
    std::string Approx = stringAttr(N, "approximate", "none");
    if (Approx != "none" && Approx != "tanh")
      return makeError(What, ": ", Where, ": Gelu's approximate is '", Approx, "'; it must be none or tanh");
    const std::string X = N.input(0);
    std::string Half = scalarLike(Before, N, "half", 0.5F, X);
    std::string One = scalarLike(Before, N, "one", 1.0F, X);
    std::string Inner;
    if (Approx == "none") {
      std::string Scaled =
          before(Before, N, "scaled", "Mul", {X, scalarLike(Before, N, "rsqrt2", 0.70710678F, X)});
      Inner = before(Before, N, "erf", "Erf", {Scaled});
    } else {
      std::string X2 = before(Before, N, "x2", "Mul", {X, X});
      std::string X3 = before(Before, N, "x3", "Mul", {X2, X});
      std::string Cubic = before(Before, N, "cubic", "Mul", {X3, scalarLike(Before, N, "c", 0.044715F, X)});
      std::string Sum = before(Before, N, "sum", "Add", {X, Cubic});
      std::string Arg = before(Before, N, "arg", "Mul", {Sum, scalarLike(Before, N, "k", 0.7978845608F, X)});
      Inner = before(Before, N, "tanh", "Tanh", {Arg});
    }
    std::string Plus = before(Before, N, "plus1", "Add", {Inner, One});
    std::string Times = before(Before, N, "timesx", "Mul", {X, Plus});
    becomeLast(N, "Mul", {Times, Half});
    return Error::success();
  }

  /// Mish-18 as its definition: x tanh(softplus(x)).
  Error lowerMish(onnx::NodeProto &N, std::vector<onnx::NodeProto> &Before) {
    const std::string X = N.input(0);
    std::string Soft = before(Before, N, "softplus", "Softplus", {X});
    std::string Tanh = before(Before, N, "tanh", "Tanh", {Soft});
    becomeLast(N, "Mul", {X, Tanh});
    return Error::success();
  }

  /// Reduce*-18: 'axes' moves from an input to the attribute (13's form).
  Error lowerReduce(onnx::NodeProto &N, const std::string &Where, bool &Changed) {
    const std::string Op = N.op_type();
    if ((Op == "ReduceMax" || Op == "ReduceMin") && From >= 20)
      if (const Declared *D = declared(N, 0); D && D->elem == onnx::TensorProto::BOOL)
        return refuse(Where, Op + "-20 on bool has no opset-17 form");
    bool Noop = nodeIntAttribute(N, "noop_with_empty_axes", 0) != 0;
    const std::vector<int64_t> *Axes = nullptr;
    if (N.input_size() >= 2 && !N.input(1).empty()) {
      Axes = constInts(N.input(1));
      if (!Axes)
        return refuse(Where, Op + "-18 reads its axes from '" + N.input(1) +
                                 "', which is not a constant (computed at run time, a graph input, or "
                                 "external data); opset 17 takes them only as an attribute");
    }
    Changed |= dropAttr(N, "noop_with_empty_axes");
    if (N.input_size() >= 2) {
      dropInputsFrom(N, 1);
      Changed = true;
    }
    if (Axes && !Axes->empty()) {
      auto *A = N.add_attribute();
      A->set_name("axes");
      A->set_type(onnx::AttributeProto::INTS);
      for (int64_t V : *Axes) A->add_ints(V);
      return Error::success();
    }
    // No axes: reduce over all of them, or (noop_with_empty_axes) keep each
    // element with the reduction's element-wise part applied, as ONNX
    // Runtime 1.30 and ONNX's reference implementation do (measured:
    // ReduceSumSquare squares, ReduceL1/L2 take |x|, ReduceLogSum the log).
    if (!Noop) return Error::success();
    std::string X = N.input(0);
    N.clear_attribute();
    Changed = true;
    if (Op == "ReduceSumSquare") {
      N.set_op_type("Mul");
      N.add_input(X);
    } else if (Op == "ReduceL1" || Op == "ReduceL2") {
      N.set_op_type("Abs");
    } else if (Op == "ReduceLogSum") {
      N.set_op_type("Log");
    } else {
      N.set_op_type("Identity");
    }
    return Error::success();
  }

  /// Split-18's num_outputs: chunks of ceil(dim / n), the last smaller
  /// (Changelog, Split-18), as Split-13's 'split' input, or 13's equal split.
  Error lowerSplit(onnx::NodeProto &N, std::vector<onnx::NodeProto> &Before, const std::string &Where,
                   bool &Changed) {
    const onnx::AttributeProto *NumA = findNodeAttribute(N, "num_outputs");
    if (!NumA) return Error::success();
    int64_t Num = NumA->i();
    if (N.input_size() >= 2 && !N.input(1).empty())
      return makeError(What, ": ", Where, ": Split-18 has both a 'split' input and 'num_outputs'");
    if (Num < 1 || Num != N.output_size())
      return makeError(What, ": ", Where, ": Split-18 has num_outputs=", Num, " but ", N.output_size(),
                       " outputs");
    dropAttr(N, "num_outputs");
    Changed = true;
    const Declared *D = declared(N, 0);
    int64_t Axis = nodeIntAttribute(N, "axis", 0);
    int64_t Rank = D && D->hasRank ? static_cast<int64_t>(D->dims.size()) : -1;
    if (Rank >= 0 && Axis < 0) Axis += Rank;
    int64_t Dim = Rank >= 0 && Axis >= 0 && Axis < Rank ? D->dims[Axis] : -1;
    if (Dim < 0) {
      // Split-13 without sizes splits equally: the same as the original
      // wherever the dim divides; where it does not, the lowered model fails
      // at run time while the original splits unevenly. The note says so.
      ++UnknownDimSplits;
      return Error::success();
    }
    if (Dim % Num == 0) return Error::success();
    // Written without Dim + Num - 1, which a hostile dim near 2^63 overflows.
    int64_t Chunk = Dim / Num + 1;
    // Chunk * (Num - 1) <= Dim + Num: no overflow below 2^62.
    if (Dim > (int64_t{1} << 62))
      return makeError(What, ": ", Where, ": Split-18 splits a dim of ", Dim, ", larger than any tensor");
    int64_t Last = Dim - Chunk * (Num - 1);
    if (Last <= 0)
      return makeError(What, ": ", Where, ": Split-18 cannot split a dim of ", Dim, " into ", Num,
                       " chunks of ", Chunk);
    std::vector<int64_t> Sizes(Num - 1, Chunk);
    Sizes.push_back(Last);
    Before.push_back(intsConstant(N, "split_sizes", Sizes));
    if (N.input_size() < 2) N.add_input(Before.back().output(0));
    else N.set_input(1, Before.back().output(0));
    return Error::success();
  }

  /// Pad-18's 'axes' input: pads for every axis, zero on those not named.
  Error lowerPad(onnx::NodeProto &N, std::vector<onnx::NodeProto> &Before, const std::string &Where,
                 bool &Changed) {
    if (From >= 19 && stringAttr(N, "mode", "constant") == "wrap")
      return refuse(Where, "Pad-19 with mode='wrap' has no opset-17 form");
    if (N.input_size() < 4 || N.input(3).empty()) {
      if (N.input_size() == 4) {
        N.mutable_input()->RemoveLast();
        Changed = true;
      }
      return Error::success();
    }
    const std::vector<int64_t> *Axes = constInts(N.input(3));
    const std::vector<int64_t> *Pads = N.input_size() >= 2 ? constInts(N.input(1)) : nullptr;
    const Declared *D = declared(N, 0);
    if (!Axes || !Pads || !D || !D->hasRank)
      return refuse(Where, "Pad-18 with an 'axes' input needs constant pads and axes and a known rank for "
                           "its opset-17 form (pads on every axis)");
    int64_t Rank = static_cast<int64_t>(D->dims.size());
    if (Pads->size() != 2 * Axes->size())
      return makeError(What, ": ", Where, ": Pad-18 has ", Pads->size(), " pads for ", Axes->size(), " axes");
    std::vector<int64_t> Full(2 * Rank, 0);
    for (size_t I = 0; I < Axes->size(); ++I) {
      int64_t A = (*Axes)[I] < 0 ? (*Axes)[I] + Rank : (*Axes)[I];
      if (A < 0 || A >= Rank)
        return makeError(What, ": ", Where, ": Pad-18 axis ", (*Axes)[I], " is out of range for rank ", Rank);
      Full[A] = (*Pads)[I];
      Full[A + Rank] = (*Pads)[I + Axes->size()];
    }
    Before.push_back(intsConstant(N, "pads", Full));
    Orphans.insert(N.input(1));
    N.set_input(1, Before.back().output(0));
    dropInputsFrom(N, 3);
    Changed = true;
    return Error::success();
  }

  /// Resize-18/19: new attributes lower when at their defaults.
  Error lowerResize(onnx::NodeProto &N, const std::string &Where, bool &Changed) {
    if (nodeIntAttribute(N, "antialias", 0) != 0)
      return refuse(Where, "Resize-18 with antialias=1 has no opset-17 form");
    std::string Policy = stringAttr(N, "keep_aspect_ratio_policy", "stretch");
    if (Policy != "stretch")
      return refuse(Where, "Resize-18 with keep_aspect_ratio_policy='" + Policy + "' has no opset-17 form");
    if (stringAttr(N, "coordinate_transformation_mode", "") == "half_pixel_symmetric")
      return refuse(Where, "Resize-19 with coordinate_transformation_mode='half_pixel_symmetric' has no "
                           "opset-17 form");
    if (const onnx::AttributeProto *A = findNodeAttribute(N, "axes")) {
      const Declared *D = declared(N, 0);
      bool Identity = D && D->hasRank && A->ints_size() == static_cast<int>(D->dims.size());
      for (int I = 0; Identity && I < A->ints_size(); ++I) Identity = A->ints(I) == I;
      if (!Identity)
        return refuse(Where, "Resize-18 with an 'axes' attribute other than every axis in order has no "
                             "opset-17 form");
    }
    for (const char *Name : {"antialias", "keep_aspect_ratio_policy", "axes"}) Changed |= dropAttr(N, Name);
    return Error::success();
  }

  /// GridSample-20 renamed 16's modes and allows N-D inputs.
  Error lowerGridSample(onnx::NodeProto &N, const std::string &Where, bool &Changed) {
    if (const Declared *D = declared(N, 0); D && D->hasRank && D->dims.size() != 4)
      return refuse(Where, "GridSample-20 on a " + std::to_string(D->dims.size()) +
                               "-D input has no opset-17 form (4-D only)");
    for (auto &A : *N.mutable_attribute()) {
      if (A.name() != "mode") continue;
      if (A.s() == "linear") A.set_s("bilinear");
      else if (A.s() == "cubic") A.set_s("bicubic");
      else continue;
      Changed = true;
    }
    return Error::success();
  }

  Error lowerMl(const onnx::NodeProto &N, const std::string &Where) const {
    if (N.op_type() == "TreeEnsemble" && MlFrom >= 5)
      return makeError(What, ": ", Where,
                       ": TreeEnsemble is new in ai.onnx.ml 5 and has no ai.onnx.ml-3 form "
                       "(ONNX Runtime runs it, the ONNX checker here knows ai.onnx.ml <= 3)");
    if (N.op_type() == "LabelEncoder")
      for (const auto &A : N.attribute())
        if (A.name().size() > 7 && A.name().compare(A.name().size() - 7, 7, "_tensor") == 0)
          return makeError(What, ": ", Where, ": LabelEncoder-4 with attribute '", A.name(),
                           "' has no ai.onnx.ml-3 form (the ONNX checker here knows ai.onnx.ml <= 3)");
    return Error::success();
  }
};

bool usesDomain(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes, const std::string &Domain) {
  for (const auto &N : Nodes) {
    if (N.domain() == Domain) return true;
    for (const auto &A : N.attribute()) {
      if (A.has_g() && usesDomain(A.g().node(), Domain)) return true;
      for (const auto &Sub : A.graphs())
        if (usesDomain(Sub.node(), Domain)) return true;
    }
  }
  return false;
}

/// The default-domain and ai.onnx.ml versions a list of imports names.
std::pair<int, int>
importedVersions(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &Imports) {
  int Default = 0, Ml = 0;
  for (const auto &O : Imports) {
    if (isDefaultDomain(O.domain())) Default = static_cast<int>(O.version());
    if (O.domain() == "ai.onnx.ml") Ml = static_cast<int>(O.version());
  }
  return {Default, Ml};
}

/// The versions to lower from (0: leave the domain alone), or an error
/// when a version is newer than any lowering here. ai.onnx.ml is lowered
/// only when a node uses it: ORT training graphs import ai.onnx.ml 4-5
/// without ml nodes, and the checker has nothing to check then.
Expected<std::pair<int, int>>
lowerFrom(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &Imports,
          const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes, const std::string &What) {
  auto [Default, Ml] = importedVersions(Imports);
  int From = Default > checkerOpset("") ? Default : 0;
  int MlFrom = Ml > checkerOpset("ai.onnx.ml") && usesDomain(Nodes, "ai.onnx.ml") ? Ml : 0;
  if (From > kMaxLoweredOpset)
    return makeError(What, ": the model imports opset ", From,
                     " of the default domain; the ONNX checker here "
                     "knows opsets <= ",
                     checkerOpset(""), " and opsets 18-", kMaxLoweredOpset,
                     " are lowered to 17 at import: export the model at opset ", kMaxLoweredOpset,
                     " or lower");
  if (MlFrom > kMaxLoweredMlOpset)
    return makeError(What, ": the model imports ai.onnx.ml ", MlFrom,
                     "; the ONNX checker here knows <= ", checkerOpset("ai.onnx.ml"), " and ai.onnx.ml 4-",
                     kMaxLoweredMlOpset, " are lowered");
  return std::make_pair(From, MlFrom);
}

void setImports(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &Imports, int From, int MlFrom) {
  for (auto &O : Imports) {
    if (From && isDefaultDomain(O.domain())) O.set_version(kTargetOpset);
    if (MlFrom && O.domain() == "ai.onnx.ml") O.set_version(kTargetMlOpset);
  }
}

std::string loweredNote(int From, int MlFrom, const Lowerer &L, const std::string &Where) {
  std::string What = From ? "opset " + std::to_string(From) + " of the default domain" : "";
  if (MlFrom) What += (What.empty() ? "" : " and ") + std::string("ai.onnx.ml ") + std::to_string(MlFrom);
  std::string Note = Where + " imports " + What + ", newer than the ONNX checker here knows: lowered to " +
                     (From ? "opset 17" : "") + (From && MlFrom ? " and " : "") +
                     (MlFrom ? "ai.onnx.ml 3" : "") + " at import (" + std::to_string(L.rewritten()) +
                     " node(s) rewritten), and every model written is in that form";
  if (L.unknownDimSplits())
    Note += "; " + std::to_string(L.unknownDimSplits()) +
            " Split(s) with num_outputs on a dim of unknown size became equal splits (the dim must divide)";
  return Note;
}
} // namespace

Expected<OpsetLoweringResult> onnxp::lowerOpsets(onnx::ModelProto &M, const std::string &What) {
  OpsetLoweringResult R;
  Expected<std::pair<int, int>> Model = lowerFrom(M.opset_import(), M.graph().node(), What);
  if (!Model) return Model.takeError();
  auto [From, MlFrom] = *Model;
  if (From || MlFrom) {
    Lowerer L(What, From, MlFrom);
    L.learnGraph(M.graph());
    ONNXP_RETURN_IF_ERROR(L.lowerNodes(*M.mutable_graph()->mutable_node(), ""));
    L.dropOrphans(*M.mutable_graph());
    setImports(*M.mutable_opset_import(), From, MlFrom);
    R.notes.push_back(loweredNote(From, MlFrom, L, "the model"));
  }
  // A model-local function has imports of its own.
  for (auto &F : *M.mutable_functions()) {
    Expected<std::pair<int, int>> Fn =
        lowerFrom(F.opset_import(), F.node(), What + ": function '" + F.name() + "'");
    if (!Fn) return Fn.takeError();
    auto [FnFrom, FnMlFrom] = *Fn;
    if (!FnFrom && !FnMlFrom) continue;
    Lowerer L(What, FnFrom, FnMlFrom);
    L.learnNodes(F.node());
    ONNXP_RETURN_IF_ERROR(L.lowerNodes(*F.mutable_node(), " (in function '" + F.name() + "')"));
    std::unordered_set<std::string> Read(F.output().begin(), F.output().end());
    Lowerer::collectReads(F.node(), Read);
    L.dropOrphanNodes(*F.mutable_node(), Read);
    setImports(*F.mutable_opset_import(), FnFrom, FnMlFrom);
    R.notes.push_back(loweredNote(FnFrom, FnMlFrom, L, "function '" + F.name() + "'"));
  }
  return R;
}
