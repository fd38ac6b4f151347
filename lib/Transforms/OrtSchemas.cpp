//===- Transforms/OrtSchemas.cpp - ORT's LayerNormalization (ONNX domain, v1) ===//
//
// Mirrors the signature ONNX Runtime registers (contrib_defs.cc:
// LayerNormalization, kOnnxDomain, SinceVersion(1)): inputs X, scale,
// optional B; outputs Y, optional mean and inv_std_var; attributes axis,
// epsilon, stash_type. Shape inference: Y has X's type and shape; mean and
// inv_std_var have X's shape with the normalized axes set to 1. Only used
// for checking; onnx-partition never executes the op.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/OrtSchemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>

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
} // namespace

void onnxp::registerOrtOnnxDomainSchemas() {
  static std::once_flag Once;
  std::call_once(Once, [] {
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
