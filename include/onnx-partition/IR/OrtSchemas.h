//===- IR/OrtSchemas.h - Schemas ONNX Runtime adds to the ONNX domain -*- C++ -*-===//
//
// ONNX Runtime training graphs exported at opset < 17 use LayerNormalization
// in the ONNX domain, which the ONNX standard only defines from opset 17.
// ONNX Runtime accepts them because it registers its own schema for it in
// the ONNX domain since version 1 (onnxruntime/core/graph/contrib_ops,
// "LayerNormalization", kOnnxDomain, SinceVersion(1)). The checker of the
// Debian ONNX 1.12 package rejects them ("No Op registered"). Registering the
// same schema lets the checker check these models the way ORT reads them.
// The same holds for ORT's training gradients it registers in the ONNX
// domain (MaxPoolGrad, AveragePoolGrad, and ConvGrad of older exports),
// which ORT training graphs of CNNs carry.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_ORTSCHEMAS_H
#define ONNXP_IR_ORTSCHEMAS_H

namespace onnxp {

/// Registers (once per process) ONNX-domain schemas that ONNX Runtime
/// defines for opsets where ONNX has none. Idempotent and thread-safe.
void registerOrtOnnxDomainSchemas();

} // namespace onnxp

#endif // ONNXP_IR_ORTSCHEMAS_H
