//===- IR/DimExpression.h - Symbolic dims that are arithmetic -*- C++ -*-===//
//
// ONNX Runtime's symbolic shape inference writes dim_params such as
// `16*inputs_input_ids_dim0` or `inputs_input_ids_dim0*(mask_dim1 - 1)`
// (ort_bloom3_training). Binding the names they use (--dim) must bind them
// too, and a user must be asked for the names, never for the expression.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_DIMEXPRESSION_H
#define ONNXP_IR_DIMEXPRESSION_H

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace onnxp {

/// Whether a dim_param is an expression (+, -, *, /, %, parentheses) rather
/// than one name. Names may contain '-' (`input-0_dim0`); an operator '-' has
/// a space or a bracket beside it.
bool isDimExpression(const std::string &Param);

/// Evaluates a dim_param with the bindings: a bound name, an integer, or an
/// expression over them (integer arithmetic, / and % floor like Python, as
/// sympy prints them). nullopt when a name is unbound, on division by zero,
/// overflow, a result < 0, or a malformed or too deeply nested expression.
std::optional<int64_t> evaluateDim(const std::string &Param, const std::map<std::string, int64_t> &Bindings);

/// The names a dim_param uses (itself when it is a plain name).
std::set<std::string> dimNames(const std::string &Param);

} // namespace onnxp

#endif // ONNXP_IR_DIMEXPRESSION_H
