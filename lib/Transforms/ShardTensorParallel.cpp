//===- Transforms/ShardTensorParallel.cpp - Megatron shard models ---------===//
//
// See ShardTensorParallel.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/ShardTensorParallel.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace onnxp;

namespace {

/// The constants a shard may rewrite: initializers and Constant nodes'
/// values, by tensor name.
std::map<std::string, const onnx::TensorProto *> constantsOf(const onnx::GraphProto &G) {
  std::map<std::string, const onnx::TensorProto *> C;
  for (const onnx::TensorProto &T : G.initializer()) C[T.name()] = &T;
  for (const onnx::NodeProto &N : G.node())
    if (N.op_type() == "Constant" && N.output_size() == 1)
      for (const onnx::AttributeProto &A : N.attribute())
        if (A.name() == "value" && A.has_t()) C[N.output(0)] = &A.t();
  return C;
}

std::vector<float> floats(const onnx::TensorProto &T) {
  if (T.has_raw_data()) {
    std::vector<float> V(T.raw_data().size() / sizeof(float));
    std::memcpy(V.data(), T.raw_data().data(), V.size() * sizeof(float));
    return V;
  }
  return {T.float_data().begin(), T.float_data().end()};
}

std::vector<int64_t> int64s(const onnx::TensorProto &T) {
  if (T.has_raw_data()) {
    std::vector<int64_t> V(T.raw_data().size() / sizeof(int64_t));
    std::memcpy(V.data(), T.raw_data().data(), V.size() * sizeof(int64_t));
    return V;
  }
  return {T.int64_data().begin(), T.int64_data().end()};
}

int64_t attrInt(const onnx::NodeProto &N, const std::string &Name) {
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == Name) return A.i();
  return 0;
}

/// Part K of T of fp32 tensor W along axis Axis (of its rank), under Name.
onnx::TensorProto slice(const onnx::TensorProto &W, int Axis, int T, int K, const std::string &Name) {
  std::vector<int64_t> Dims(W.dims().begin(), W.dims().end());
  const std::vector<float> V = floats(W);
  int64_t Outer = 1, Inner = 1;
  for (int I = 0; I < Axis; ++I) Outer *= Dims[I];
  for (size_t I = Axis + 1; I < Dims.size(); ++I) Inner *= Dims[I];
  const int64_t Full = Dims[Axis], Part = Full / T;
  std::vector<float> Out;
  Out.reserve(static_cast<size_t>(Outer * Part * Inner));
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t A = K * Part; A < (K + 1) * Part; ++A)
      for (int64_t I = 0; I < Inner; ++I) Out.push_back(V[static_cast<size_t>((O * Full + A) * Inner + I)]);
  onnx::TensorProto S;
  S.set_name(Name);
  S.set_data_type(onnx::TensorProto::FLOAT);
  Dims[Axis] = Part;
  for (int64_t D : Dims) S.add_dims(D);
  S.set_raw_data(std::string(reinterpret_cast<const char *>(Out.data()), Out.size() * sizeof(float)));
  return S;
}

class Sharder {
public:
  Sharder(const onnx::ModelProto &M, const ShardRequest &R)
      : M(M), G(M.graph()), R(R), Consts(constantsOf(M.graph())) {}

  Expected<onnx::ModelProto> run(const std::map<std::string, onnx::TypeProto> &Types);

private:
  const onnx::ModelProto &M;
  const onnx::GraphProto &G;
  const ShardRequest &R;
  std::map<std::string, const onnx::TensorProto *> Consts;
  std::set<int64_t> Widths;                          // the column outputs' full widths
  std::map<int, std::map<int, std::string>> Renamed; // node -> input slot -> new tensor
  std::map<std::string, onnx::TensorProto> Added;    // new constants of this shard

  std::string tag(const std::string &Name) const {
    return Name + ".tp" + std::to_string(R.shard) + "of" + std::to_string(R.degree);
  }
  Expected<const onnx::TensorProto *> weightOf(int V) const;
  Error splitWeight(int V, bool Column);
  Error reshapeHeads(int V);
  void sliceElementwise(int V);
  void replace(int V, int Slot, onnx::TensorProto T) {
    Renamed[V][Slot] = T.name();
    Added[T.name()] = std::move(T);
  }
};

Expected<const onnx::TensorProto *> Sharder::weightOf(int V) const {
  const onnx::NodeProto &N = G.node(V);
  auto It = N.input_size() >= 2 ? Consts.find(N.input(1)) : Consts.end();
  if (It == Consts.end() || It->second->data_type() != onnx::TensorProto::FLOAT ||
      It->second->dims_size() != 2 || attrInt(N, "transA") != 0 || It->second->has_data_location())
    return makeUsageError("tensor parallelism: ", N.op_type(), " '", N.name(),
                          "' does not read its weight as a 2-D fp32 constant second input; its shards "
                          "cannot be written");
  return It->second;
}

/// Megatron-LM §3: column projections keep a slice of the output columns,
/// the row projection the same slice of its input rows.
Error Sharder::splitWeight(int V, bool Column) {
  const onnx::NodeProto &N = G.node(V);
  Expected<const onnx::TensorProto *> W = weightOf(V);
  if (!W) return W.takeError();
  const bool TransB = N.op_type() == "Gemm" && attrInt(N, "transB") != 0;
  // The weight is [in, out], or [out, in] under transB.
  const int OutAxis = TransB ? 0 : 1, Axis = Column ? OutAxis : 1 - OutAxis;
  const int64_t Full = (*W)->dims(Axis);
  if (Full % R.degree != 0)
    return makeUsageError("tensor parallelism: '", N.name(), "': width ", Full, " does not split ", R.degree,
                          " ways");
  if (Column) Widths.insert(Full);
  replace(V, 1, slice(**W, Axis, R.degree, R.shard, tag(N.input(1))));
  if (N.op_type() != "Gemm" || N.input_size() < 3 || N.input(2).empty()) return Error::success();
  auto C = Consts.find(N.input(2));
  if (C == Consts.end() || C->second->data_type() != onnx::TensorProto::FLOAT)
    return makeUsageError("tensor parallelism: Gemm '", N.name(),
                          "' has a bias that is not an fp32 constant");
  onnx::TensorProto Bias = *C->second;
  Bias.set_name(tag(N.input(2)));
  if (Column && Bias.dims_size() >= 1 && Bias.dims(Bias.dims_size() - 1) == Full) {
    replace(V, 2, slice(*C->second, Bias.dims_size() - 1, R.degree, R.shard, Bias.name()));
  } else if (!Column && R.shard > 0) {
    // The bias is added once: shard 0's partial carries it.
    std::vector<float> Zero(floats(*C->second).size(), 0.0f);
    Bias.clear_float_data();
    Bias.set_raw_data(std::string(reinterpret_cast<const char *>(Zero.data()), Zero.size() * sizeof(float)));
    replace(V, 2, std::move(Bias));
  }
  return Error::success();
}

/// The head count and the concatenated heads' width of a Reshape between
/// the projections shrink t ways (Megatron-LM §3: each GPU holds h/t heads).
Error Sharder::reshapeHeads(int V) {
  const onnx::NodeProto &N = G.node(V);
  auto It = N.input_size() >= 2 ? Consts.find(N.input(1)) : Consts.end();
  if (It == Consts.end())
    return makeUsageError("tensor parallelism: Reshape '", N.name(),
                          "' inside a split block computes its shape in the graph; only constant shapes are "
                          "rewritten");
  std::vector<int64_t> S = int64s(*It->second);
  const int64_t H = R.block->heads;
  bool Changed = false;
  for (size_t I = 0; I < S.size() && !Changed; ++I)
    if (H > 1 && I + 1 < S.size() && S[I] == H && S[I + 1] > 0 && Widths.count(S[I] * S[I + 1])) {
      S[I] = H / R.degree;
      Changed = true;
    }
  for (size_t I = 0; I < S.size() && !Changed; ++I)
    if (S[I] > 1 && Widths.count(S[I])) {
      S[I] /= R.degree;
      Changed = true;
    }
  if (!Changed) return Error::success();
  onnx::TensorProto T;
  T.set_name(tag(N.input(1)));
  T.set_data_type(onnx::TensorProto::INT64);
  T.add_dims(static_cast<int64_t>(S.size()));
  for (int64_t D : S) T.add_int64_data(D);
  replace(V, 1, std::move(T));
  return Error::success();
}

/// An elementwise constant as wide as a column output (a bias Add after a
/// MatMul) keeps the shard's slice of its last axis.
void Sharder::sliceElementwise(int V) {
  static const std::set<std::string> Elementwise = {"Add", "Sub", "Mul", "Div"};
  const onnx::NodeProto &N = G.node(V);
  if (!Elementwise.count(N.op_type())) return;
  for (int I = 0; I < N.input_size(); ++I) {
    auto It = Consts.find(N.input(I));
    if (It == Consts.end() || It->second->data_type() != onnx::TensorProto::FLOAT ||
        It->second->dims_size() == 0)
      continue;
    const int Last = It->second->dims_size() - 1;
    if (It->second->dims(Last) > 1 && Widths.count(It->second->dims(Last)))
      replace(V, I, slice(*It->second, Last, R.degree, R.shard, tag(N.input(I))));
  }
}

Expected<onnx::ModelProto> Sharder::run(const std::map<std::string, onnx::TypeProto> &Types) {
  std::string RowOutput;
  if (R.block && R.degree > 1) {
    const ShardBlock &B = *R.block;
    if (B.heads > 0 && B.heads % R.degree != 0)
      return makeUsageError("tensor parallelism: ", B.heads, " heads do not split ", R.degree, " ways");
    for (int V : B.column) ONNXP_RETURN_IF_ERROR(splitWeight(V, /*Column=*/true));
    ONNXP_RETURN_IF_ERROR(splitWeight(B.row, /*Column=*/false));
    for (int V : B.sharded) {
      if (V == B.row || std::count(B.column.begin(), B.column.end(), V)) continue;
      if (G.node(V).op_type() == "Reshape") ONNXP_RETURN_IF_ERROR(reshapeHeads(V));
      else sliceElementwise(V);
    }
    RowOutput = G.node(B.row).output(0);
  }
  onnx::ModelProto Out;
  Out.set_ir_version(M.ir_version());
  *Out.mutable_opset_import() = M.opset_import();
  Out.set_producer_name("onnx-partition");
  onnx::GraphProto &OG = *Out.mutable_graph();
  OG.set_name(G.name() + "_tp" + std::to_string(R.shard));
  std::set<std::string> Read;
  for (int V : R.nodes) {
    onnx::NodeProto N = G.node(V);
    for (auto &[Slot, Name] : Renamed[V]) N.set_input(Slot, Name);
    if (V == (R.block ? R.block->row : -1) && R.degree > 1) N.set_output(0, partialName(RowOutput, R.shard));
    for (const std::string &I : N.input()) Read.insert(I);
    *OG.add_node() = std::move(N);
  }
  for (const onnx::TensorProto &T : G.initializer())
    if (Read.count(T.name())) *OG.add_initializer() = T;
  for (auto &[Name, T] : Added)
    if (Read.count(Name)) *OG.add_initializer() = T;
  auto AddValue = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *To, const std::string &Name,
                      const std::string &Typed) -> Error {
    auto It = Types.find(Typed);
    if (It == Types.end()) return makeInternalError("tensor parallelism: no type for '", Typed, "'");
    onnx::ValueInfoProto *V = To->Add();
    V->set_name(Name);
    *V->mutable_type() = It->second;
    return Error::success();
  };
  for (const std::string &I : R.inputs) ONNXP_RETURN_IF_ERROR(AddValue(OG.mutable_input(), I, I));
  for (const std::string &O : R.outputs)
    ONNXP_RETURN_IF_ERROR(AddValue(OG.mutable_output(), O == RowOutput ? partialName(O, R.shard) : O, O));
  return Out;
}

} // namespace

std::string onnxp::partialName(const std::string &Y, int K) { return Y + ".partial" + std::to_string(K); }

Expected<onnx::ModelProto> onnxp::shardModel(const onnx::ModelProto &M, const ShardRequest &R,
                                             const std::map<std::string, onnx::TypeProto> &Types) {
  if (R.degree > 1 && !R.block) return makeInternalError("tensor parallelism: t > 1 without a block");
  Sharder S(M, R);
  return S.run(Types);
}
