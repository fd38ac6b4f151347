//===- Cost/OrtTransformerFusions.cpp - ORT's transformer fusions ------===//
//
// LayerNorm, SimplifiedLayerNorm (RMSNorm), Gelu, FastGelu, BiasGelu,
// QuickGelu, SkipLayerNorm, Attention (BERT and GPT-2 forms), MatMulScale
// and DivMul, as onnxruntime/core/optimizer/ matches them.
//
//===----------------------------------------------------------------------===//
#include "OrtFusionMatcher.h"

#include <algorithm>
#include <cmath>

using namespace onnxp;

/// layer_norm_fusion.cc: ReduceMean(x) -> Sub(x, mean) -> Pow(., 2) ->
/// ReduceMean -> Add(eps) -> Sqrt -> Div(sub, sqrt) -> Mul(scale) -> Add(bias).
/// Older PyTorch exports compute x - mean twice, one Sub for Pow and one
/// for Div; ORT fuses that form as well.
void OrtFusionMatcher::matchLayerNorm(int Mean1) {
  if (!isOp(Mean1, "ReduceMean")) return;
  const std::string &X = arg(Mean1, 0), &Mean = out(Mean1);
  auto Users = Consumers.find(Mean);
  if (GraphOutputs.count(Mean) || Users == Consumers.end() || Users->second.empty() ||
      Users->second.size() > 2)
    return;
  int PowN = -1, DivN = -1;
  std::vector<int> Subs;
  for (int SubN : Users->second) {
    if (!isOp(SubN, "Sub") || arg(SubN, 0) != X || arg(SubN, 1) != Mean) return;
    if (std::find(Subs.begin(), Subs.end(), SubN) != Subs.end()) return;
    Subs.push_back(SubN);
    auto SubUsers = Consumers.find(out(SubN));
    if (GraphOutputs.count(out(SubN)) || SubUsers == Consumers.end()) return;
    for (int U : SubUsers->second) {
      if (PowN < 0 && isOp(U, "Pow")) PowN = U;
      else if (DivN < 0 && isOp(U, "Div") && arg(U, 0) == out(SubN)) DivN = U;
      else return; // x - mean read by anything else: ORT keeps it
    }
  }
  if (PowN < 0 || DivN < 0) return;
  int Mean2 = soleConsumer(PowN);
  if (!isOp(Mean2, "ReduceMean")) return;
  int AddEps = soleConsumer(Mean2);
  if (!isOp(AddEps, "Add")) return;
  int SqrtN = soleConsumer(AddEps);
  if (!isOp(SqrtN, "Sqrt") || soleConsumer(SqrtN) != DivN) return;
  std::vector<int> Members = Subs;
  Members.insert(Members.end(), {PowN, Mean2, AddEps, SqrtN, DivN});
  int Last = DivN;
  if (int MulN = soleConsumer(DivN); isOp(MulN, "Mul")) {
    Members.push_back(MulN);
    Last = MulN;
    if (int AddB = soleConsumer(MulN); isOp(AddB, "Add")) Members.push_back(AddB), Last = AddB;
  }
  group(Mean1, Members, "LayerNormalization");
  LnOutputs.insert(out(Last));
}

/// layer_norm_fusion.cc, SimplifiedLayerNormFusion (RMSNorm): Pow(x) ->
/// ReduceMean -> Add(eps) -> Sqrt -> Div(x, .) -> Mul(1-D scale), each
/// intermediate read once. (ORT checks neither the exponent nor eps.) A
/// Div(1, sqrt) then Mul(x, .) is not this pattern and stays unfused; the
/// Cast-wrapped fp16 forms (GPU only) are not matched.
void OrtFusionMatcher::matchSimplifiedLayerNorm(int PowN) {
  if (!isOp(PowN, "Pow")) return;
  const std::string &X = arg(PowN, 0);
  int Mean = soleConsumer(PowN);
  if (!isOp(Mean, "ReduceMean")) return;
  int AddEps = soleConsumer(Mean);
  if (!isOp(AddEps, "Add")) return;
  int SqrtN = soleConsumer(AddEps);
  if (!isOp(SqrtN, "Sqrt")) return;
  int DivN = soleConsumer(SqrtN);
  if (!isOp(DivN, "Div") || arg(DivN, 1) != out(SqrtN)) return;
  std::vector<int> Members = {Mean, AddEps, SqrtN, DivN};
  int Normed = DivN;
  if (arg(DivN, 0) != X) { // Div(1, sqrt) -> Mul(x, .): DivMulFusion (Level 1) made it Div(x, sqrt)
    int XMul = soleConsumer(DivN);
    if (!reciprocal(DivN) || !isOp(XMul, "Mul") || otherInput(XMul, DivN) != X) return;
    Members.push_back(XMul);
    Normed = XMul;
  }
  int MulN = soleConsumer(Normed);
  if (!isOp(MulN, "Mul")) return;
  const TensorInfo *Scale = info(otherInput(MulN, Normed));
  if (!Scale || !Scale->hasShape || Scale->dims.size() != 1) return;
  Members.push_back(MulN);
  group(PowN, Members, "SimplifiedLayerNormalization");
}

/// div_mul_fusion.cc's condition: Div(1, x) (a one-element constant of
/// exactly 1) whose only reader is a Mul.
bool OrtFusionMatcher::reciprocal(int DivN) const {
  if (!isOp(DivN, "Div") || node(DivN).input_size() != 2) return false;
  std::optional<double> One = Values.scalar(arg(DivN, 0));
  return One && *One == 1.0 && isOp(soleConsumer(DivN), "Mul");
}

/// div_mul_fusion.cc (a Level 1 rewrite): Div(1, x) -> Mul(y, .) becomes
/// Div(y, x), one kernel.
void OrtFusionMatcher::matchDivMul(int DivN) {
  if (reciprocal(DivN)) group(DivN, {soleConsumer(DivN)}, "DivMul");
}

/// quick_gelu_fusion.cc: x * Sigmoid(alpha * x) or x * Sigmoid(x) (SiLU,
/// Swish) -> one QuickGelu; alpha is any scalar constant.
void OrtFusionMatcher::matchQuickGelu(int First) {
  std::string X;
  std::vector<int> Members;
  int Sig = First;
  if (isOp(First, "Mul") && node(First).input_size() == 2) {
    int Slot = Values.scalar(arg(First, 0)) ? 0 : Values.scalar(arg(First, 1)) ? 1 : -1;
    if (Slot < 0) return;
    X = node(First).input(1 - Slot);
    Sig = soleConsumer(First);
    Members.push_back(Sig);
  }
  if (!isOp(Sig, "Sigmoid")) return;
  if (X.empty()) X = arg(Sig, 0);
  int MulN = soleConsumer(Sig);
  if (!isOp(MulN, "Mul") || otherInput(MulN, Sig) != X) return;
  Members.push_back(MulN);
  group(First, Members, "QuickGelu");
}

/// A Mul or Div of J by a one-element constant (the divisor in slot 1),
/// no higher in rank than the other operand: returns the other operand.
std::string OrtFusionMatcher::scaled(int J) const {
  if (J < 0 || !Eligible[J] || !onnxDomain(node(J)) || node(J).input_size() != 2) return "";
  bool Div = node(J).op_type() == "Div";
  if (!Div && node(J).op_type() != "Mul") return "";
  for (int Slot = Div ? 1 : 0; Slot < 2; ++Slot) {
    const TensorInfo *C = info(node(J).input(Slot)), *X = info(node(J).input(1 - Slot));
    std::optional<double> N = C ? C->numElements() : std::nullopt;
    if (constant(node(J).input(Slot)) && N && *N == 1 && X && X->hasShape && C->dims.size() <= X->dims.size())
      return node(J).input(1 - Slot);
  }
  return "";
}

/// matmul_scale_fusion.cc: a MatMul whose only reader multiplies or
/// divides it by a scalar constant, or whose operand is such a scaled
/// tensor, becomes one FusedMatMul (the scale is its alpha). A scaling
/// node that feeds others stays and the FusedMatMul reads its input.
void OrtFusionMatcher::matchMatMulScale(int I) {
  if (!isOp(I, "MatMul") || node(I).input_size() != 2) return;
  const TensorInfo *A = info(arg(I, 0));
  static const std::set<int32_t> Types = {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
                                          onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16};
  if (!A || !Types.count(A->elemType)) return;
  std::vector<int> Members;
  bool Scaled = false;
  for (int Slot = 0; Slot < 2; ++Slot) {
    int In = parent(I, Slot);
    if (!free(In)) continue;
    const TensorInfo *X = info(scaled(In));
    if (!X || !X->hasShape || X->dims.empty()) continue; // the scaled operand must not be a scalar
    Scaled = true;
    if (readOnlyBy(out(In), {I}) && std::find(Members.begin(), Members.end(), In) == Members.end())
      Members.push_back(In);
  }
  if (int Out = soleConsumer(I); free(Out) && !scaled(Out).empty()) Scaled = true, Members.push_back(Out);
  if (!Scaled) return;
  group(I, Members, "FusedMatMul");
}

/// gelu_fusion.cc: Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5),
/// or with the 0.5 multiplying x first. ORT checks each constant's value
/// (sqrt 2 as M_SQRT2 or BERT's 1.4142099618911743); Mul by 1/sqrt 2 in
/// place of the Div is taken as well.
void OrtFusionMatcher::matchGelu(int ErfN) {
  if (!isOp(ErfN, "Erf")) return;
  int Scale = producer(arg(ErfN, 0));
  if (!(isOp(Scale, "Div") || isOp(Scale, "Mul")) || soleConsumer(Scale) != ErfN) return;
  if (node(Scale).input_size() != 2) return;
  const std::string &X = arg(Scale, 0), &C = arg(Scale, 1);
  bool Sqrt2 = node(Scale).op_type() == "Div" ? Values.is(C, M_SQRT2) || Values.is(C, 1.4142099618911743)
                                              : Values.is(C, M_SQRT1_2);
  if (!Sqrt2) return;
  int AddN = soleConsumer(ErfN);
  if (!isOp(AddN, "Add") || !Values.is(otherInput(AddN, ErfN), 1.0)) return;
  int Mul1 = soleConsumer(AddN);
  if (!isOp(Mul1, "Mul")) return;
  std::vector<int> Members = {ErfN, AddN, Mul1};
  std::string Other = otherInput(Mul1, AddN);
  if (Other != X) { // x * 0.5 computed first: Mul(x, 0.5) feeds Mul1
    int Half = producer(Other);
    if (!isOp(Half, "Mul") || soleConsumer(Half) != Mul1 || operandBeside(Half, X).empty() ||
        !Values.is(operandBeside(Half, X), 0.5))
      return;
    Members.push_back(Half);
  } else {
    int Mul2 = soleConsumer(Mul1);
    if (!isOp(Mul2, "Mul") || !Values.is(otherInput(Mul2, Mul1), 0.5)) return;
    Members.push_back(Mul2);
  }
  group(Scale, Members, "Gelu");
}

/// fast_gelu_fusion.cc: the tanh approximation of Gelu,
///   0.5 x (1 + tanh(0.7978845834732056 (x + 0.044715 x^3))),
/// written as x * 0.044715 * x + 1, times x * 0.79788 (first formula), or
/// Pow(x, 3) * 0.044715 + x, times 0.79788 (second formula); then Tanh ->
/// Add(1) -> Mul(., x * 0.5). Every constant is checked by value. The fp16
/// form with Cast nodes around it is not matched.
void OrtFusionMatcher::matchFastGelu(int First) {
  std::string X;
  std::vector<int> Members;
  int TanhIn = -1;
  if (isOp(First, "Mul") && node(First).input_size() == 2) { // first formula
    int Slot = Values.is(arg(First, 0), 0.044715) ? 0 : Values.is(arg(First, 1), 0.044715) ? 1 : -1;
    if (Slot < 0) return;
    X = node(First).input(1 - Slot);
    int Mul2 = soleConsumer(First);
    if (!isOp(Mul2, "Mul") || otherInput(Mul2, First) != X) return;
    int Add1 = soleConsumer(Mul2);
    if (!isOp(Add1, "Add") || !Values.is(otherInput(Add1, Mul2), 1.0)) return;
    int Mul3 = soleConsumer(Add1);
    if (!isOp(Mul3, "Mul")) return;
    int Mul4 = producer(otherInput(Mul3, Add1));
    if (!isOp(Mul4, "Mul") || soleConsumer(Mul4) != Mul3 || operandBeside(Mul4, X).empty() ||
        !Values.is(operandBeside(Mul4, X), 0.7978845834732056))
      return;
    Members = {Mul2, Add1, Mul3, Mul4};
    TanhIn = Mul3;
  } else if (isOp(First, "Pow") && node(First).input_size() == 2) { // second formula
    if (!Values.is(arg(First, 1), 3.0)) return;
    X = arg(First, 0);
    int Mul1 = soleConsumer(First);
    if (!isOp(Mul1, "Mul") || !Values.is(otherInput(Mul1, First), 0.044714998453855515)) return;
    int Add1 = soleConsumer(Mul1);
    if (!isOp(Add1, "Add") || otherInput(Add1, Mul1) != X) return;
    int Mul2 = soleConsumer(Add1);
    if (!isOp(Mul2, "Mul") || !Values.is(otherInput(Mul2, Add1), 0.7978845834732056)) return;
    Members = {Mul1, Add1, Mul2};
    TanhIn = Mul2;
  } else {
    return;
  }
  int TanhN = soleConsumer(TanhIn);
  if (!isOp(TanhN, "Tanh")) return;
  int Add2 = soleConsumer(TanhN);
  if (!isOp(Add2, "Add") || !Values.is(otherInput(Add2, TanhN), 1.0)) return;
  int Mul5 = -1;
  if (auto C = Consumers.find(out(Add2));
      C != Consumers.end() && C->second.size() == 1 && !GraphOutputs.count(out(Add2)))
    Mul5 = C->second[0];
  if (!isOp(Mul5, "Mul") || GraphOutputs.count(out(Mul5))) return;
  int Mul6 = producer(otherInput(Mul5, Add2));
  if (!isOp(Mul6, "Mul") || soleConsumer(Mul6) != Mul5 || operandBeside(Mul6, X).empty() ||
      !Values.is(operandBeside(Mul6, X), 0.5))
    return;
  Members.insert(Members.end(), {TanhN, Add2, Mul6, Mul5});
  group(First, Members, "FastGelu");
}

/// bias_gelu_fusion.cc: Add(x, bias) whose only reader is a Gelu (fused
/// above or a contrib Gelu) becomes BiasGelu; before a FastGelu without a
/// bias input, the bias joins the FastGelu. The bias is 1-D with x's last
/// dim (ORT does not require it to be constant).
void OrtFusionMatcher::matchBiasGelu(int AddN) {
  if (!isOp(AddN, "Add") || node(AddN).input_size() != 2) return;
  const std::string &T = out(AddN);
  auto C = Consumers.find(T);
  if (C == Consumers.end() || C->second.empty()) return;
  int Target = C->second[0], Kernel = -1;
  std::string Kind;
  std::set<int> Readers;
  if (int A = AnchorOf[Target]; A >= 0 && (kindOf(A) == "Gelu" || kindOf(A) == "FastGelu")) {
    Kernel = A;
    Kind = kindOf(A) == "Gelu" ? "BiasGelu" : "BiasFastGelu";
    Readers.insert(Sum.groups[A].begin(), Sum.groups[A].end());
  } else if (msOp(Target, "Gelu") && Sum.marks[Target].empty()) {
    Kernel = Target, Kind = "BiasGelu", Readers = {Target};
  } else if (msOp(Target, "FastGelu") && Sum.marks[Target].empty() && node(Target).input_size() == 1) {
    Kernel = Target, Kind = "BiasFastGelu", Readers = {Target};
  } else {
    return;
  }
  if (!readOnlyBy(T, Readers)) return;
  const TensorInfo *A = info(arg(AddN, 0)), *B = info(arg(AddN, 1));
  if (!A || !B || !A->hasShape || !B->hasShape || A->dims.empty() || B->dims.empty()) return;
  if (A->dims.back() <= 0 || A->dims.back() != B->dims.back()) return;
  if (A->dims.size() != 1 && B->dims.size() != 1) return;
  groupOrExtend(Kernel, {AddN}, Kind);
}

/// A constant operand of dims Dims (ValidateMatMulInitializer,
/// ValidateAddBiasInitializer) of a float or float16 type (LoadQkvWeights).
bool OrtFusionMatcher::constantOfDims(const std::string &T, const std::vector<int64_t> &Dims) const {
  const TensorInfo *I = info(T);
  return constant(T) && I && I->hasShape && I->dims == Dims &&
         (I->elemType == onnx::TensorProto::FLOAT || I->elemType == onnx::TensorProto::FLOAT16);
}

/// One projection of attention_fusion.cc's paths q, k and v:
/// Root -> MatMul(W x W weight) -> Add(W bias) -> Reshape([0, 0, N, H]) ->
/// Transpose(Perm), read from Tip's input Slot. Appends its nodes.
bool OrtFusionMatcher::projection(int Tip, int Slot, const std::string &Root, int64_t W,
                                  const std::vector<int64_t> &Perm, int64_t &Heads,
                                  std::vector<int> &Nodes) const {
  int Tr = parent(Tip, Slot), Rs = parent(Tr, 0), Bias = parent(Rs, 0), Mm = parent(Bias, 0);
  if (!isOp(Tr, "Transpose") || perm(Tr) != Perm || !isOp(Rs, "Reshape") || !isOp(Bias, "Add") ||
      !isOp(Mm, "MatMul") || arg(Mm, 0) != Root || arg(Bias, 0) != out(Mm))
    return false;
  if (!constantOfDims(arg(Mm, 1), {W, W}) || !constantOfDims(arg(Bias, 1), {W})) return false;
  // CheckNodesInPathQ/K/V: the heads split as [0, 0, N, H], N * H = W.
  std::optional<std::vector<int64_t>> Shape = Values.ints(arg(Rs, 1));
  if (!Shape || Shape->size() != 4 || (*Shape)[0] != 0 || ((*Shape)[1] != 0 && (*Shape)[1] != -1) ||
      (*Shape)[2] <= 0 || (*Shape)[2] * (*Shape)[3] != W || (Heads && (*Shape)[2] != Heads))
    return false;
  Heads = (*Shape)[2];
  Nodes.insert(Nodes.end(), {Mm, Bias, Rs, Tr});
  return true;
}

/// Where both attention forms start: the output of node I, a
/// LayerNormalization (an ONNX node or one fused above) whose last dim W is
/// known, read by 2 to 6 nodes. Returns those readers, or null.
const std::vector<int> *OrtFusionMatcher::attentionRoot(int I, int64_t &W) const {
  if (I < 0 || !Eligible[I] || node(I).output_size() < 1) return nullptr;
  const std::string &L = out(I);
  if (!isOp(I, "LayerNormalization") && !LnOutputs.count(L)) return nullptr;
  const TensorInfo *LI = info(L);
  if (!LI || !LI->hasShape || LI->dims.empty() || LI->dims.back() <= 0) return nullptr;
  auto Users = Consumers.find(L);
  if (Users == Consumers.end() || Users->second.size() < 2 || Users->second.size() > 6) return nullptr;
  W = LI->dims.back();
  return &Users->second;
}

/// attention_fusion.cc (AttentionFusion::FuseSubGraph, the BERT form). From
/// a LayerNormalization (an ONNX node or one fused above) read by one Add
/// (the residual), three MatMuls and otherwise only Shapes:
///   q, k, v = LN -> MatMul -> Add -> Reshape -> Transpose (k as 0,2,3,1),
///   MatMul(q, k) -> Div(sqrt H) -> Add(mask) -> Softmax -> MatMul(., v)
///   -> Transpose(0,2,1,3) -> Reshape([0, 0, W]) -> MatMul -> Add -> the residual Add,
/// with the mask made as Unsqueeze -> Unsqueeze -> (Cast) -> Sub -> Mul.
/// Everything from the three projections to the last Reshape is one
/// Attention kernel. The output projection after it stays a MatMul and an
/// Add (SkipLayerNormalization may take the Add); the mask nodes stay
/// separate (ORT replaces them with one Cast of the mask, shared by the
/// layers). Weights must be constant W x W, biases W, W the LN's last dim.
void OrtFusionMatcher::matchAttention(int I) {
  int64_t W = 0;
  const std::vector<int> *Users = attentionRoot(I, W);
  if (!Users) return;
  const std::string &L = out(I);
  int Residual = -1, MatMuls = 0, Shapes = 0, Adds = 0;
  for (int U : *Users) {
    const std::string &Op = node(U).op_type();
    if (Op == "Add") ++Adds, Residual = U;
    else if (Op == "MatMul") ++MatMuls;
    else if (Op == "Shape") ++Shapes;
  }
  if (Adds != 1 || MatMuls != 3 || Shapes + 4 != static_cast<int>(Users->size())) return;

  // Path v, up from the residual Add's first input.
  int OutBias = parent(Residual, 0), OutMm = parent(OutBias, 0), OutRs = parent(OutMm, 0),
      OutTr = parent(OutRs, 0), Qkv = parent(OutTr, 0);
  if (!is(OutBias, "Add") || !is(OutMm, "MatMul") || !isOp(OutRs, "Reshape") || !isOp(OutTr, "Transpose") ||
      !isOp(Qkv, "MatMul") || perm(OutTr) != std::vector<int64_t>{0, 2, 1, 3})
    return;
  if (!constantOfDims(arg(OutMm, 1), {W, W}) || !constantOfDims(arg(OutBias, 1), {W})) return;
  std::optional<std::vector<int64_t>> Merge = Values.ints(arg(OutRs, 1));
  if (!Merge || Merge->size() != 3 || (*Merge)[0] != 0 || (*Merge)[1] != 0 ||
      ((*Merge)[2] != W && (*Merge)[2] != -1))
    return;
  int64_t Heads = 0;
  std::vector<int> Nodes = {OutRs, OutTr, Qkv};
  if (!projection(Qkv, 1, L, W, {0, 2, 1, 3}, Heads, Nodes)) return;

  // The mask: Softmax(Add(Div(MatMul(q, k), sqrt H), mask)).
  int Soft = parent(Qkv, 0), MaskAdd = parent(Soft, 0), Scale = parent(MaskAdd, 0), Qk = parent(Scale, 0);
  if (!isOp(Soft, "Softmax") || !isOp(MaskAdd, "Add") || !isOp(Scale, "Div") || !isOp(Qk, "MatMul")) return;
  // MatchInputMaskSubgraph: Softmax with the attribute axis = 3, its Add
  // reading Mul(Sub(1, [Cast](Unsqueeze<axes 2>(Unsqueeze<axes 1>(mask)))),
  // -10000) in slot 1; the Add, Sub, Cast and Unsqueezes read once. ORT
  // matches Unsqueeze only at versions 1 and 11 and Cast at 9, so the form
  // exists only up to opset 12 (an opset-13 export is not fused).
  if (defaultOpset() > 12 || intAttr(Soft, "axis") != std::optional<int64_t>(3)) return;
  int MaskMul = parent(MaskAdd, 1), MaskSub = parent(MaskMul, 0);
  if (!is(MaskMul, "Mul") || !is(MaskSub, "Sub") || soleConsumer(MaskSub) != MaskMul) return;
  if (!Values.is(arg(MaskSub, 0), 1.0) || !Values.is(arg(MaskMul, 1), -10000.0)) return;
  int Up = parent(MaskSub, 1);
  if (is(Up, "Cast") && soleConsumer(Up) == MaskSub) Up = parent(Up, 0);
  int Up1 = parent(Up, 0);
  if (!is(Up, "Unsqueeze") || !is(Up1, "Unsqueeze") || soleConsumer(Up1) != Up || soleConsumer(Up) < 0 ||
      intsAttr(Up, "axes") != std::vector<int64_t>{2} || intsAttr(Up1, "axes") != std::vector<int64_t>{1})
    return;
  Nodes.insert(Nodes.end(), {Soft, MaskAdd, Scale, Qk});
  if (!projection(Qk, 0, L, W, {0, 2, 1, 3}, Heads, Nodes) ||
      !projection(Qk, 1, L, W, {0, 2, 3, 1}, Heads, Nodes))
    return;
  if (!Values.is(arg(Scale, 1), std::sqrt(static_cast<double>(W / Heads)))) return;

  // Nothing outside the kernel may read what it computes inside.
  std::set<int> Group(Nodes.begin(), Nodes.end());
  if (Group.size() != Nodes.size()) return;
  for (int X : Nodes)
    if (X != OutRs && !readOnlyBy(out(X), Group)) return;
  int Anchor = *Group.begin(); // the first in graph order
  Nodes.erase(std::find(Nodes.begin(), Nodes.end(), Anchor));
  group(Anchor, Nodes, "Attention");
  // The mask chain, from the first Unsqueeze to the Mul.
  std::vector<int> Chain = {Up1, Up};
  if (int C = parent(MaskSub, 1); C != Up) Chain.push_back(C);
  Chain.insert(Chain.end(), {MaskSub, MaskMul});
  MaskChains.push_back(Chain);
}

/// AttentionFusionHelper::SetMaskNodesToRemove: once every reader of a
/// mask chain's Mul is a fused Attention, ORT removes the chain and feeds
/// the mask to the Attentions through one Cast to int32 (shared by the
/// layers). Priced as one kernel anchored on the first Unsqueeze.
void OrtFusionMatcher::matchMaskChains() {
  for (const std::vector<int> &Chain : MaskChains) {
    int Mul = Chain.back();
    bool AllFused = std::all_of(Chain.begin(), Chain.end(), [&](int X) { return free(X); });
    auto Readers = Consumers.find(out(Mul));
    if (!AllFused || GraphOutputs.count(out(Mul)) || Readers == Consumers.end()) continue;
    for (int U : Readers->second) AllFused &= AnchorOf[U] >= 0 && kindOf(AnchorOf[U]) == "Attention";
    if (AllFused) group(Chain.front(), std::vector<int>(Chain.begin() + 1, Chain.end()), "AttentionMask");
  }
}

/// attention_fusion_helper.h, MatchGemmSubgraph: Reshape -> Gemm ->
/// Reshape ending at node Last; the Gemm's weight W x Cols and bias Cols
/// are constant. Returns {first Reshape, Gemm} or {-1, -1}.
std::pair<int, int> OrtFusionMatcher::gemmSubgraph(int Last, int64_t W, int64_t Cols) const {
  int G = parent(Last, 0), First = parent(G, 0);
  if (!is(Last, "Reshape") || !is(G, "Gemm") || !is(First, "Reshape") || node(G).input_size() != 3)
    return {-1, -1};
  if (intAttr(G, "transA").value_or(0) || intAttr(G, "transB").value_or(0)) return {-1, -1};
  if (!constantOfDims(arg(G, 1), {W, Cols}) || !constantOfDims(arg(G, 2), {Cols})) return {-1, -1};
  return {First, G};
}

/// Whether every reader of T other than the nodes in Group is folded (a
/// folded Shape does not read the tensor when the graph runs).
bool OrtFusionMatcher::readOnlyByOrFolded(const std::string &T, const std::set<int> &Group) const {
  if (GraphOutputs.count(T)) return false;
  auto C = Consumers.find(T);
  if (C == Consumers.end()) return false;
  for (int U : C->second)
    if (!Group.count(U) && Sum.marks[U] != "folded") return false;
  return true;
}

/// attention_fusion_helper.h, FuseGptAttention without past state or an
/// input mask (GPT-2 exports): LN (input from an Add A0; read by one
/// Reshape and otherwise only by Shapes) -> Reshape -> Gemm(W x 3W) ->
/// Reshape -> Split into q, k, v, each -> Reshape -> Transpose (k as
/// 0,2,3,1); MatMul(q, k) -> Div(scalar constant) -> Where(constant causal
/// mask, ., scalar constant) -> Softmax -> MatMul(., v) ->
/// Transpose(0,2,1,3) -> Reshape -> Reshape -> Gemm(W x W) -> Reshape ->
/// the Add that also reads A0. Everything from the first Reshape to the
/// Reshape before the output Gemm is one Attention kernel, anchored on the
/// QKV Gemm; the causal-mask arithmetic is constant once the dims are
/// bound, so it is folded. ORT 1.30 fuses GPT-2 whatever the Div's and the
/// Where's constants are (Cost/ort-fusions-match-ort.test changes both), so
/// their values are not checked here. Looser than ORT: the shape arithmetic
/// around the Gemms (MatchGemmSubgraph) is folded and not matched.
void OrtFusionMatcher::matchGptAttention(int I) {
  int64_t W = 0;
  const std::vector<int> *Users = attentionRoot(I, W);
  if (!Users) return;
  const std::string &L = out(I);
  int Reshapes = 0, Shapes = 0;
  for (int U : *Users) Reshapes += is(U, "Reshape"), Shapes += is(U, "Shape");
  if (Reshapes != 1 || (Shapes != 1 && Shapes != 3) || Reshapes + Shapes != static_cast<int>(Users->size()))
    return;
  int A0 = producer(arg(I, 0)), After = -1;
  if (!is(A0, "Add")) return;
  for (int U : Consumers.at(out(A0)))
    if (is(U, "Add")) {
      After = U;
      break;
    }
  if (After < 0) return;
  auto [OutFirst, OutGemm] = gemmSubgraph(parent(After, 1), W, W);
  if (OutFirst < 0) return;
  int Merge = parent(OutFirst, 0), Tr = parent(Merge, 0), Qkv = parent(Tr, 0);
  if (!isOp(Merge, "Reshape") || !isOp(Tr, "Transpose") || perm(Tr) != std::vector<int64_t>{0, 2, 1, 3} ||
      !isOp(Qkv, "MatMul"))
    return;
  std::vector<int> Nodes = {Merge, Tr, Qkv};
  int SplitN = -1;
  auto head = [&](int Tip, int Slot, int Output, const std::vector<int64_t> &Perm) {
    int T = parent(Tip, Slot), R = parent(T, 0), S = parent(R, 0);
    if (!isOp(T, "Transpose") || perm(T) != Perm || !isOp(R, "Reshape") || !isOp(S, "Split") ||
        node(S).output_size() != 3 || arg(R, 0) != node(S).output(Output) || (SplitN >= 0 && S != SplitN))
      return false;
    SplitN = S;
    Nodes.insert(Nodes.end(), {R, T});
    return true;
  };
  if (!head(Qkv, 1, 2, {0, 2, 1, 3})) return;
  int Soft = parent(Qkv, 0), Mask = parent(Soft, 0), Scale = parent(Mask, 1), Qk = parent(Scale, 0);
  if (!isOp(Soft, "Softmax") || !isOp(Mask, "Where") || !isOp(Scale, "Div") || !isOp(Qk, "MatMul")) return;
  if (!constant(arg(Mask, 0)) || !Values.scalar(arg(Mask, 2)) || !Values.scalar(arg(Scale, 1))) return;
  Nodes.insert(Nodes.end(), {Soft, Mask, Scale, Qk});
  if (!head(Qk, 0, 0, {0, 2, 1, 3}) || !head(Qk, 1, 1, {0, 2, 3, 1})) return;
  auto [InFirst, InGemm] = gemmSubgraph(parent(SplitN, 0), W, 3 * W);
  if (InFirst < 0 || arg(InFirst, 0) != L) return;
  Nodes.insert(Nodes.end(), {SplitN, parent(SplitN, 0), InGemm, InFirst});
  std::set<int> Group(Nodes.begin(), Nodes.end());
  if (Group.size() != Nodes.size()) return;
  for (int X : Nodes) {
    if (!free(X)) return;
    for (const std::string &O : node(X).output())
      if (X != Merge && !O.empty() && !readOnlyByOrFolded(O, Group)) return;
  }
  Nodes.erase(std::find(Nodes.begin(), Nodes.end(), InGemm));
  group(InGemm, Nodes, "Attention");
}

/// A rank-3 tensor of known dims (the operands skip_layer_norm_fusion.cc
/// accepts), or nullptr.
const TensorInfo *OrtFusionMatcher::rank3(const std::string &T) const {
  const TensorInfo *I = info(T);
  if (!I || !I->hasShape || I->dims.size() != 3) return nullptr;
  for (int64_t D : I->dims)
    if (D <= 0) return nullptr;
  return I;
}

/// skip_layer_norm_fusion.cc: LayerNormalization (an ONNX node, or one
/// fused above) whose input is Add1(a, b) of two 3-D tensors of the same
/// shape read only by it (format 3); Add1 may take one operand from
/// Add2(c, bias) with a constant 1-D bias of the last dim, read only by
/// Add1, in its first slot (format 1) or second slot (format 2).
void OrtFusionMatcher::matchSkipLayerNorm(int Ln) {
  std::set<int> LnNodes;
  if (isOp(Ln, "LayerNormalization")) LnNodes = {Ln};
  else if (Ln >= 0 && AnchorOf[Ln] == Ln && kindOf(Ln) == "LayerNormalization")
    LnNodes.insert(Sum.groups[Ln].begin(), Sum.groups[Ln].end());
  else return;
  const std::string &X = arg(Ln, 0);
  int Add1 = producer(X);
  if (!isOp(Add1, "Add") || node(Add1).input_size() != 2 || !readOnlyBy(X, LnNodes)) return;
  const TensorInfo *A = rank3(arg(Add1, 0)), *B = rank3(arg(Add1, 1));
  if (!A || !B || A->dims != B->dims) return;
  std::vector<int> Members;
  for (int Slot = 0; Slot < 2 && Members.empty(); ++Slot) { // format 1, then format 2
    int Add2 = parent(Add1, Slot);
    if (!isOp(Add2, "Add") || node(Add2).input_size() != 2 || !readOnlyBy(out(Add2), {Add1})) continue;
    const TensorInfo *In = rank3(arg(Add2, 0)), *Bias = info(arg(Add2, 1));
    if (In && Bias && constant(arg(Add2, 1)) && Bias->hasShape && Bias->dims.size() == 1 &&
        Bias->dims[0] == In->dims[2])
      Members.push_back(Add2);
  }
  Members.push_back(Add1);
  groupOrExtend(Ln, Members, "SkipLayerNormalization");
}
