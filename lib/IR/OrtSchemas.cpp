//===- IR/OrtSchemas.cpp - ORT's own ONNX-domain schemas ---------===//
//
// LayerNormalization mirrors the signature ONNX Runtime registers
// (contrib_defs.cc: LayerNormalization, kOnnxDomain, SinceVersion(1)):
// inputs X, scale, optional B; outputs Y, optional mean and inv_std_var;
// attributes axis, epsilon, stash_type. Shape inference: Y has X's type and
// shape; mean and inv_std_var have X's shape with the normalized axes set
// to 1.
//
// The pooling and convolution gradients mirror ORT's training schemas
// (orttraining/core/graph/training_op_defs.cc): MaxPoolGrad(dY, Indices)
// and AveragePoolGrad(dY) are registered there without a domain, i.e. in
// the ONNX domain since version 9, and ORT's gradient builder emits them
// so (gradient_builder.cc, NodeDef("MaxPoolGrad", {GO(0), O(1)}, ...)); a
// CNN training graph with max pooling therefore carries an ONNX-domain op
// ONNX does not define. ConvGrad(dY, X, W) -> dX, dW, dB was in the ONNX
// domain too before ORT moved it to com.microsoft. Attributes are the
// forward op's, unchecked. Only used for checking; onnx-partition never
// executes these ops.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/OrtSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <string>
#include <vector>

using namespace onnxp;

namespace {
void layerNormInference(onnx::InferenceContext &Ctx) {
  onnx::propagateElemTypeFromInputToOutput(Ctx, 0, 0);
  if (!onnx::hasNInputShapes(Ctx, 1)) return;
  onnx::propagateShapeFromInputToOutput(Ctx, 0, 0);
  const onnx::TensorShapeProto &In = Ctx.getInputType(0)->tensor_type().shape();
  int64_t Rank = In.dim_size();
  int64_t Axis = -1;
  if (const onnx::AttributeProto *A = Ctx.getAttribute("axis")) Axis = A->i();
  if (Axis < 0) Axis += Rank;
  if (Axis < 0 || Axis >= Rank) return;
  for (size_t Out = 1; Out < Ctx.getNumOutputs() && Out < 3; ++Out) {
    auto *T = Ctx.getOutputType(Out)->mutable_tensor_type();
    T->set_elem_type(onnx::TensorProto::FLOAT);
    auto *S = T->mutable_shape();
    for (int64_t D = 0; D < Rank; ++D) {
      if (D < Axis) *S->add_dim() = In.dim(static_cast<int>(D));
      else S->add_dim()->set_dim_value(1);
    }
  }
}

void propagateElemType(onnx::InferenceContext &Ctx, size_t In, size_t Out) {
  if (Out < Ctx.getNumOutputs() && Ctx.getInputType(In))
    onnx::propagateElemTypeFromInputToOutput(Ctx, In, Out);
}

/// dX of a pooling gradient: dY's element type; its shape is the forward
/// input's, which the op does not receive (the front end takes it from the
/// X_grad naming convention).
void poolGradInference(onnx::InferenceContext &Ctx) { propagateElemType(Ctx, 0, 0); }

/// ConvGrad: dX like X, dW like W, dB of W's output channels.
void convGradInference(onnx::InferenceContext &Ctx) {
  for (size_t Out = 0; Out < 3 && Out < Ctx.getNumOutputs(); ++Out) propagateElemType(Ctx, 0, Out);
  if (Ctx.getNumOutputs() > 0 && onnx::hasInputShape(Ctx, 1))
    onnx::propagateShapeFromInputToOutput(Ctx, 1, 0);
  if (Ctx.getNumOutputs() > 1 && onnx::hasInputShape(Ctx, 2))
    onnx::propagateShapeFromInputToOutput(Ctx, 2, 1);
  if (Ctx.getNumOutputs() > 2 && onnx::hasInputShape(Ctx, 2)) {
    const onnx::TensorShapeProto &W = Ctx.getInputType(2)->tensor_type().shape();
    if (W.dim_size() > 0) *Ctx.getOutputType(2)->mutable_tensor_type()->mutable_shape()->add_dim() = W.dim(0);
  }
}

const std::vector<std::string> kFloatTypes = {"tensor(float16)", "tensor(float)", "tensor(double)"};

void registerTrainingSchemas() {
  if (!onnx::OpSchemaRegistry::Schema("MaxPoolGrad", 9, "")) {
    onnx::OpSchema S;
    S.SetName("MaxPoolGrad")
        .SetDomain("")
        .SinceVersion(9)
        .SetSupportLevel(onnx::OpSchema::SupportType::EXPERIMENTAL)
        .SetDoc("ONNX Runtime's MaxPool gradient (registered by onnx-partition for checking only)")
        .AllowUncheckedAttributes()
        .Input(0, "dY", "gradient of the pooled output", "T")
        .Input(1, "Indices", "argmax indices of the forward MaxPool", "I")
        .Output(0, "dX", "gradient of the pooled input", "T")
        .TypeConstraint("T", kFloatTypes, "float tensors")
        .TypeConstraint("I", {"tensor(int64)"}, "int64 indices")
        .TypeAndShapeInferenceFunction(poolGradInference);
    S.SetLocation(__FILE__, __LINE__);
    onnx::RegisterSchema(S);
  }
  if (!onnx::OpSchemaRegistry::Schema("AveragePoolGrad", 9, "")) {
    onnx::OpSchema S;
    S.SetName("AveragePoolGrad")
        .SetDomain("")
        .SinceVersion(9)
        .SetSupportLevel(onnx::OpSchema::SupportType::EXPERIMENTAL)
        .SetDoc("ONNX Runtime's AveragePool gradient (registered by onnx-partition for checking only)")
        .AllowUncheckedAttributes()
        .Input(0, "dY", "gradient of the pooled output", "T")
        .Output(0, "dX", "gradient of the pooled input", "T")
        .TypeConstraint("T", kFloatTypes, "float tensors")
        .TypeAndShapeInferenceFunction(poolGradInference);
    S.SetLocation(__FILE__, __LINE__);
    onnx::RegisterSchema(S);
  }
  if (!onnx::OpSchemaRegistry::Schema("ConvGrad", 9, "")) {
    onnx::OpSchema S;
    S.SetName("ConvGrad")
        .SetDomain("")
        .SinceVersion(9)
        .SetSupportLevel(onnx::OpSchema::SupportType::EXPERIMENTAL)
        .SetDoc("ONNX Runtime's Conv gradient, ONNX-domain form of older exports (registered by "
                "onnx-partition for checking only)")
        .AllowUncheckedAttributes()
        .Input(0, "dY", "gradient of the convolution output", "T")
        .Input(1, "X", "forward input", "T")
        .Input(2, "W", "forward weight", "T")
        .Output(0, "dX", "gradient of X", "T", onnx::OpSchema::Optional)
        .Output(1, "dW", "gradient of W", "T", onnx::OpSchema::Optional)
        .Output(2, "dB", "gradient of the bias", "T", onnx::OpSchema::Optional)
        .TypeConstraint("T", kFloatTypes, "float tensors")
        .TypeAndShapeInferenceFunction(convGradInference);
    S.SetLocation(__FILE__, __LINE__);
    onnx::RegisterSchema(S);
  }
}
} // namespace

void onnxp::registerOrtOnnxDomainSchemas() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    registerTrainingSchemas();
    if (onnx::OpSchemaRegistry::Schema("LayerNormalization", 1, "")) return;
    onnx::OpSchema S;
    S.SetName("LayerNormalization")
        .SetDomain("")
        .SinceVersion(1)
        .SetSupportLevel(onnx::OpSchema::SupportType::EXPERIMENTAL)
        .SetDoc("ONNX Runtime's LayerNormalization for opsets before 17 (registered by onnx-partition "
                "for checking only)")
        .Attr("axis", "first normalization dimension", onnx::AttributeProto::INT, static_cast<int64_t>(-1))
        .Attr("epsilon", "added to the variance", onnx::AttributeProto::FLOAT, 1e-5f)
        .Attr("stash_type", "type of mean and inv_std_var", onnx::AttributeProto::INT,
              static_cast<int64_t>(1))
        .AllowUncheckedAttributes()
        .Input(0, "X", "input", "T")
        .Input(1, "scale", "scale", "T")
        .Input(2, "B", "bias", "T", onnx::OpSchema::Optional)
        .Output(0, "Y", "output", "T")
        .Output(1, "mean", "saved mean", "U", onnx::OpSchema::Optional)
        .Output(2, "inv_std_var", "saved inverse standard deviation", "U", onnx::OpSchema::Optional)
        .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"},
                        "input and output types")
        .TypeConstraint("U", {"tensor(float)", "tensor(double)", "tensor(bfloat16)"}, "statistics type")
        .TypeAndShapeInferenceFunction(layerNormInference);
    S.SetLocation(__FILE__, __LINE__);
    onnx::RegisterSchema(S);
  });
}
