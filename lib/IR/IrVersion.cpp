//===- IR/IrVersion.cpp - IR versions newer than the ONNX checker --------===//
//
// What IR 9-11 added (onnx/docs/IR.md, "IR version history"): IR 9 the
// FLOAT8 element types (17-20), IR 10 UINT4/INT4 (21-22), function
// overloads (NodeProto field 8, FunctionProto field 13) and metadata_props,
// IR 11 FLOAT4E2M1 (23) and the multi-device fields, IR 12 FLOAT8E8M0 (24),
// IR 13 UINT2/INT2 (25-26). metadata_props, a function's value_info, the
// multi-device fields and IR 9's default attribute values of functions
// (FunctionProto.attribute_proto, field 11) change nothing the checker
// decides: the ONNX 1.12 schema keeps them as unknown fields, every written
// model carries them on, and ONNX Runtime applies them (a call relying on a
// default reproduces its outputs; only ONNX 1.12's inference of the body
// misses the value). Element types and overloads it would misread. ONNX
// Runtime 1.30 loads IR 13 at most; a newer model cannot be told apart from
// one the checker misreads.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/IR/IrVersion.h"

#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

using namespace onnxp;

namespace {
/// The element types ONNX 1.12 predates, with the IR version that added them.
std::string newerElemType(int64_t T) {
  switch (T) {
  case 17: return "FLOAT8E4M3FN (IR 9)";
  case 18: return "FLOAT8E4M3FNUZ (IR 9)";
  case 19: return "FLOAT8E5M2 (IR 9)";
  case 20: return "FLOAT8E5M2FNUZ (IR 9)";
  case 21: return "UINT4 (IR 10)";
  case 22: return "INT4 (IR 10)";
  case 23: return "FLOAT4E2M1 (IR 11)";
  case 24: return "FLOAT8E8M0 (IR 12)";
  case 25: return "UINT2 (IR 13)";
  case 26: return "INT2 (IR 13)";
  default: break;
  }
  if (T > onnx::TensorProto_DataType_DataType_MAX)
    return "element type " + std::to_string(T) + " (after IR 8)";
  return "";
}

bool hasUnknownField(const google::protobuf::Message &M, int Number) {
  const auto &U = M.GetReflection()->GetUnknownFields(M);
  for (int I = 0; I < U.field_count(); ++I)
    if (U.field(I).number() == Number) return true;
  return false;
}

std::string inType(const onnx::TypeProto &T) {
  if (T.has_tensor_type()) return newerElemType(T.tensor_type().elem_type());
  if (T.has_sparse_tensor_type()) return newerElemType(T.sparse_tensor_type().elem_type());
  if (T.has_sequence_type()) return inType(T.sequence_type().elem_type());
  if (T.has_optional_type()) return inType(T.optional_type().elem_type());
  if (T.has_map_type()) return inType(T.map_type().value_type());
  return "";
}

std::string named(const std::string &What, const std::string &Where) {
  return What.empty() ? "" : What + " in " + Where;
}

std::string inNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes,
                    const std::string &Scope);

std::string inGraph(const onnx::GraphProto &G, const std::string &Scope) {
  for (const auto *List : {&G.input(), &G.output(), &G.value_info()})
    for (const auto &VI : *List)
      if (std::string S = named(inType(VI.type()), "the type of '" + VI.name() + "'" + Scope); !S.empty())
        return S;
  for (const auto &T : G.initializer())
    if (std::string S = named(newerElemType(T.data_type()), "initializer '" + T.name() + "'" + Scope);
        !S.empty())
      return S;
  for (const auto &T : G.sparse_initializer())
    if (std::string S = named(newerElemType(T.values().data_type()),
                              "sparse initializer '" + T.values().name() + "'" + Scope);
        !S.empty())
      return S;
  return inNodes(G.node(), Scope);
}

std::string inNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &Nodes,
                    const std::string &Scope) {
  for (const auto &N : Nodes) {
    std::string Where = "node '" + (N.name().empty() ? N.op_type() : N.name()) + "'" + Scope;
    if (hasUnknownField(N, 8)) return "a function overload (NodeProto.overload, IR 10) at " + Where;
    for (const auto &A : N.attribute()) {
      std::string AttrWhere = "attribute '" + A.name() + "' of " + Where;
      if (A.has_t())
        if (std::string S = named(newerElemType(A.t().data_type()), AttrWhere); !S.empty()) return S;
      for (const auto &T : A.tensors())
        if (std::string S = named(newerElemType(T.data_type()), AttrWhere); !S.empty()) return S;
      // Cast's 'to', EyeLike's and the Random ops' 'dtype'.
      if (A.type() == onnx::AttributeProto::INT && (A.name() == "to" || A.name() == "dtype"))
        if (std::string S = named(newerElemType(A.i()), AttrWhere); !S.empty()) return S;
      if (A.has_g())
        if (std::string S = inGraph(A.g(), " (in " + Where + ")"); !S.empty()) return S;
      for (const auto &Sub : A.graphs())
        if (std::string S = inGraph(Sub, " (in " + Where + ")"); !S.empty()) return S;
    }
  }
  return "";
}
} // namespace

int onnxp::checkerIrVersion() { return static_cast<int>(onnx::Version::IR_VERSION); }

std::string onnxp::newerIrConstruct(const onnx::ModelProto &M) {
  if (std::string S = inGraph(M.graph(), ""); !S.empty()) return S;
  for (const auto &F : M.functions()) {
    std::string Where = " (in function '" + F.name() + "')";
    if (hasUnknownField(F, 13))
      return "a function overload (FunctionProto.overload, IR 10) in function '" + F.name() + "'";
    if (std::string S = inNodes(F.node(), Where); !S.empty()) return S;
  }
  return "";
}

Error onnxp::checkIrVersion(const onnx::ModelProto &M, const std::string &What) {
  if (M.ir_version() <= checkerIrVersion()) return Error::success();
  if (M.ir_version() > kMaxReadIrVersion)
    return makeError(What, ": ir_version ", M.ir_version(),
                     " is newer than ONNX Runtime 1.30 loads (IR <= ", kMaxReadIrVersion,
                     "), and what it added cannot be told from what the ONNX checker here (IR <= ",
                     checkerIrVersion(), ") knows");
  std::string Newer = newerIrConstruct(M);
  if (!Newer.empty())
    return makeError(What, ": ir_version ", M.ir_version(),
                     " and a construct the ONNX checker here (IR <= ", checkerIrVersion(),
                     ") does not know: ", Newer);
  return Error::success();
}

Expected<onnx::ModelProto> onnxp::forIrChecker(const onnx::ModelProto &M, const std::string &What) {
  if (M.ir_version() <= checkerIrVersion()) return M;
  if (Error E = checkIrVersion(M, What)) return E;
  onnx::ModelProto Lowered = M;
  Lowered.set_ir_version(checkerIrVersion());
  return Lowered;
}
