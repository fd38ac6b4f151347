//===- Transforms/StageTypes.cpp - Element types from op schemas ---------===//
//
// StageTypes.h. Each node's formal parameters name a type string: a type
// constraint ("T") shared by the parameters that must agree, or a fixed
// type ("tensor(int64)"). A tensor of unknown element type takes the type
// of another actual argument bound to the same constraint, or the fixed
// one; passes repeat until nothing changes.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/StageTypes.h"

#include <onnx/defs/schema.h>

#include <map>

using namespace onnxp;

namespace {

/// "tensor(float)" -> TensorProto::FLOAT; 0 for anything else.
int32_t fixedElemType(const std::string &S) {
  static const std::map<std::string, int32_t> Names = {
      {"tensor(float)", onnx::TensorProto::FLOAT},     {"tensor(double)", onnx::TensorProto::DOUBLE},
      {"tensor(float16)", onnx::TensorProto::FLOAT16}, {"tensor(bfloat16)", onnx::TensorProto::BFLOAT16},
      {"tensor(int64)", onnx::TensorProto::INT64},     {"tensor(int32)", onnx::TensorProto::INT32},
      {"tensor(int16)", onnx::TensorProto::INT16},     {"tensor(int8)", onnx::TensorProto::INT8},
      {"tensor(uint8)", onnx::TensorProto::UINT8},     {"tensor(uint16)", onnx::TensorProto::UINT16},
      {"tensor(uint32)", onnx::TensorProto::UINT32},   {"tensor(uint64)", onnx::TensorProto::UINT64},
      {"tensor(bool)", onnx::TensorProto::BOOL},       {"tensor(string)", onnx::TensorProto::STRING}};
  auto It = Names.find(S);
  return It == Names.end() ? 0 : It->second;
}

/// The formal parameter's type string for the I-th actual argument (the
/// last formal parameter takes every further one when it is variadic).
const std::string *typeStrOf(const std::vector<onnx::OpSchema::FormalParameter> &Formals, int I) {
  if (Formals.empty()) return nullptr;
  if (I < (int)Formals.size()) return &Formals[I].GetTypeStr();
  if (Formals.back().GetOption() == onnx::OpSchema::Variadic) return &Formals.back().GetTypeStr();
  return nullptr;
}

} // namespace

std::vector<std::string> onnxp::completeElemTypesFromSchemas(OnnxModel &M) {
  std::map<std::string, int> Opset;
  for (const auto &O : M.proto.opset_import())
    Opset[O.domain() == "ai.onnx" ? "" : O.domain()] = static_cast<int>(O.version());
  auto Known = [&](const std::string &T) {
    const TensorInfo *I = M.tensor(T);
    return I ? I->elemType : 0;
  };
  std::vector<std::string> Typed;
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (const onnx::NodeProto &N : M.graph().node()) {
      const std::string Domain = N.domain() == "ai.onnx" ? "" : N.domain();
      auto OIt = Opset.find(Domain);
      if (OIt == Opset.end()) continue;
      const onnx::OpSchema *S = onnx::OpSchemaRegistry::Schema(N.op_type(), OIt->second, Domain);
      if (!S) continue;
      // Every actual argument with its type string.
      std::vector<std::pair<const std::string *, const std::string *>> Args;
      for (int I = 0; I < N.input_size(); ++I)
        if (!N.input(I).empty()) Args.push_back({&N.input(I), typeStrOf(S->inputs(), I)});
      for (int I = 0; I < N.output_size(); ++I)
        if (!N.output(I).empty()) Args.push_back({&N.output(I), typeStrOf(S->outputs(), I)});
      std::map<std::string, int32_t> ByConstraint;
      for (auto &[Name, Str] : Args)
        if (Str && Known(*Name)) ByConstraint.emplace(*Str, Known(*Name));
      for (auto &[Name, Str] : Args) {
        if (!Str || Known(*Name)) continue;
        int32_t T = fixedElemType(*Str);
        if (!T)
          if (auto It = ByConstraint.find(*Str); It != ByConstraint.end()) T = It->second;
        if (!T) continue;
        M.tensors[*Name].elemType = T;
        Typed.push_back(*Name);
        Changed = true;
      }
    }
  }
  return Typed;
}
