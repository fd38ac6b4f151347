//===- Cost/OrtConvGemmFusions.cpp - ORT's Conv and Gemm fusions -------===//
//
// The Level 1 Conv rewrites and MatMulAddFusion, and Level 2's
// ConvActivation and GemmActivation (onnxruntime/core/optimizer/).
//
//===----------------------------------------------------------------------===//
#include "OrtFusionMatcher.h"

using namespace onnxp;

bool OrtFusionMatcher::activation(int I) const {
  static const std::unordered_set<std::string> Acts = {"Relu", "LeakyRelu", "Sigmoid",
                                                       "Tanh", "Clip",      "HardSigmoid"};
  return free(I) && onnxDomain(node(I)) && Acts.count(node(I).op_type());
}

/// conv_bn_fusion.cc, conv_add_fusion.cc, conv_mul_fusion.cc (constant
/// operands folded into the weights), then conv_activation_fusion.cc.
void OrtFusionMatcher::matchConv(int ConvN) {
  if (!isOp(ConvN, "Conv") || node(ConvN).input_size() < 2 || !constant(arg(ConvN, 1))) return;
  std::vector<int> Members;
  std::string Kind = "Conv";
  int Cur = ConvN;
  while (true) {
    int Next = soleConsumer(Cur);
    if (isOp(Next, "BatchNormalization") && node(Next).output_size() >= 1) {
      bool Const = true;
      for (int K = 1; K < node(Next).input_size(); ++K) Const &= constant(node(Next).input(K));
      if (!Const) break;
      Kind += "+BatchNormalization";
    } else if ((isOp(Next, "Add") || isOp(Next, "Mul")) && constant(otherInput(Next, Cur))) {
      Kind += "+" + node(Next).op_type();
    } else {
      break;
    }
    Members.push_back(Next);
    Cur = Next;
  }
  if (int Act = soleConsumer(Cur); activation(Act)) {
    Members.push_back(Act);
    Kind += "+" + node(Act).op_type();
  }
  if (!Members.empty()) group(ConvN, Members, Kind);
}

/// matmul_add_fusion.cc (MatMul plus a constant bias -> Gemm; an N-D
/// input of a static model through Reshapes, which are views), then
/// gemm_activation_fusion.cc.
void OrtFusionMatcher::matchMatMulOrGemm(int I) {
  std::vector<int> Members;
  std::string Kind;
  int Cur = I;
  if (isOp(I, "MatMul")) {
    const TensorInfo *A = M.tensor(arg(I, 0));
    const TensorInfo *B = node(I).input_size() > 1 ? M.tensor(arg(I, 1)) : nullptr;
    int AddN = soleConsumer(I);
    if (!A || !B || B->dims.size() != 2 || !isOp(AddN, "Add")) return;
    std::string Bias = otherInput(AddN, I);
    const TensorInfo *BI = M.tensor(Bias);
    if (!constant(Bias) || !BI || BI->dims.empty() || BI->dims.size() > 2) return;
    // An N-D input is reshaped to 2-D around the Gemm, which ORT does
    // only when the input's shape is static in the model it loads (not
    // after our --dim bindings) and the bias is 1-D.
    if (A->dims.size() != 2 && (!staticModel() || !A->fullyKnown() || !B->fullyKnown() ||
                                BI->dims.size() != 1 || BI->dims[0] != B->dims[1]))
      return;
    Members.push_back(AddN);
    Kind = "MatMul+Add";
    Cur = AddN;
  } else if (isOp(I, "Gemm")) {
    Kind = "Gemm";
  } else {
    return;
  }
  if (int Act = soleConsumer(Cur); activation(Act)) {
    Members.push_back(Act);
    Kind += "+" + node(Act).op_type();
  }
  if (!Members.empty()) group(I, Members, Kind);
}
