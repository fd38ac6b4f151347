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
/// Groups > 1: the axis is Groups tensors side by side (a fused Q/K/V
/// projection split afterwards), each cut T ways; part K keeps its slice of
/// every group, in order.
onnx::TensorProto slice(const onnx::TensorProto &W, int Axis, int T, int K, const std::string &Name,
                        int64_t Groups = 1) {
  std::vector<int64_t> Dims(W.dims().begin(), W.dims().end());
  const std::vector<float> V = floats(W);
  int64_t Outer = 1, Inner = 1;
  for (int I = 0; I < Axis; ++I) Outer *= Dims[I];
  for (size_t I = Axis + 1; I < Dims.size(); ++I) Inner *= Dims[I];
  const int64_t Full = Dims[Axis], Group = Full / Groups, Part = Group / T;
  std::vector<float> Out;
  Out.reserve(static_cast<size_t>(Outer * Part * Groups * Inner));
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t Gr = 0; Gr < Groups; ++Gr)
      for (int64_t A = Gr * Group + K * Part; A < Gr * Group + (K + 1) * Part; ++A)
        for (int64_t I = 0; I < Inner; ++I) Out.push_back(V[static_cast<size_t>((O * Full + A) * Inner + I)]);
  onnx::TensorProto S;
  S.set_name(Name);
  S.set_data_type(onnx::TensorProto::FLOAT);
  Dims[Axis] = Part * Groups;
  for (int64_t D : Dims) S.add_dims(D);
  S.set_raw_data(std::string(reinterpret_cast<const char *>(Out.data()), Out.size() * sizeof(float)));
  return S;
}

class Sharder {
public:
  Sharder(const onnx::ModelProto &M, const ShardRequest &R)
      : M(M), G(M.graph()), R(R), Consts(constantsOf(M.graph())) {
    for (int I = 0; I < G.node_size(); ++I)
      for (const std::string &T : G.node(I).input()) Readers[T].push_back(I);
  }

  Expected<onnx::ModelProto> run(const std::map<std::string, onnx::TypeProto> &Types);

private:
  const onnx::ModelProto &M;
  const onnx::GraphProto &G;
  const ShardRequest &R;
  std::map<std::string, const onnx::TensorProto *> Consts;
  std::set<int64_t> Widths;                          // the column outputs' full widths
  std::map<int64_t, int64_t> FusedGroups;            // full width -> tensors fused in it (Q/K/V: 3)
  std::map<std::string, std::vector<int>> Readers;   // tensor -> nodes of the graph reading it
  std::map<int, std::vector<int64_t>> NewInts;       // node -> its "split" attribute in the shard
  std::map<int, std::map<int, std::string>> Renamed; // node -> input slot -> new tensor
  std::map<std::string, onnx::TensorProto> Added;    // new constants of this shard

  std::string tag(const std::string &Name) const { return shardName(Name, R.shard, R.degree); }
  Error splitInputWeight(int V, bool Column);
  std::string renamed(const std::string &T, bool Output) const;
  Error addValue(const std::map<std::string, onnx::TypeProto> &Types, onnx::ValueInfoProto *V,
                 const std::string &Name, const std::string &Typed) const;
  Expected<const onnx::TensorProto *> weightOf(int V) const;
  Error splitWeight(int V, bool Column);
  Error reshapeHeads(int V);
  Error concatShape(int Reshape, int Concat);
  int64_t groupsAfter(int V) const;
  Error splitSizes(int V);
  std::vector<int64_t> shardShape(std::vector<int64_t> S) const;
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
  if (N.input_size() >= 2 && R.slicedAxes.count(N.input(1))) return splitInputWeight(V, Column);
  Expected<const onnx::TensorProto *> W = weightOf(V);
  if (!W) return W.takeError();
  const bool TransB = N.op_type() == "Gemm" && attrInt(N, "transB") != 0;
  // The weight is [in, out], or [out, in] under transB.
  const int OutAxis = TransB ? 0 : 1, Axis = Column ? OutAxis : 1 - OutAxis;
  const int64_t Full = (*W)->dims(Axis);
  if (Full % R.degree != 0)
    return makeUsageError("tensor parallelism: '", N.name(), "': width ", Full, " does not split ", R.degree,
                          " ways");
  const int64_t Groups = Column ? groupsAfter(V) : 1;
  if (Full % (R.degree * Groups) != 0)
    return makeUsageError("tensor parallelism: '", N.name(), "': ", Groups, " fused outputs of width ",
                          Full / Groups, " do not split ", R.degree, " ways");
  if (Column) {
    Widths.insert(Full);
    Widths.insert(Full / Groups);
    FusedGroups[Full] = Groups;
  }
  replace(V, 1, slice(**W, Axis, R.degree, R.shard, tag(N.input(1)), Groups));
  if (N.op_type() != "Gemm" || N.input_size() < 3 || N.input(2).empty()) return Error::success();
  auto C = Consts.find(N.input(2));
  if (C == Consts.end() || C->second->data_type() != onnx::TensorProto::FLOAT)
    return makeUsageError("tensor parallelism: Gemm '", N.name(),
                          "' has a bias that is not an fp32 constant");
  onnx::TensorProto Bias = *C->second;
  Bias.set_name(tag(N.input(2)));
  if (Column && Bias.dims_size() >= 1 && Bias.dims(Bias.dims_size() - 1) == Full) {
    replace(V, 2, slice(*C->second, Bias.dims_size() - 1, R.degree, R.shard, Bias.name(), Groups));
  } else if (!Column && R.shard > 0) {
    // The bias is added once: shard 0's partial carries it.
    std::vector<float> Zero(floats(*C->second).size(), 0.0f);
    Bias.clear_float_data();
    Bias.set_raw_data(std::string(reinterpret_cast<const char *>(Zero.data()), Zero.size() * sizeof(float)));
    replace(V, 2, std::move(Bias));
  }
  return Error::success();
}

/// A weight that is a graph input (a training graph's parameter): the
/// runner slices it (parameterAxes' axis, read under its shard name); the
/// column widths are recorded for the Reshapes between the projections,
/// and a row Gemm's bias input is dropped from shards k > 0, so that it is
/// added once (Megatron-LM §3).
Error Sharder::splitInputWeight(int V, bool Column) {
  const onnx::NodeProto &N = G.node(V);
  const int Axis = R.slicedAxes.at(N.input(1));
  for (const onnx::ValueInfoProto &I : G.input())
    if (I.name() == N.input(1) && Column) {
      const auto &Shape = I.type().tensor_type().shape();
      if (Shape.dim_size() != 2 || !Shape.dim(Axis).has_dim_value() || Shape.dim(Axis).dim_value() % R.degree)
        return makeUsageError("tensor parallelism: '", N.name(), "': its weight '", N.input(1),
                              "' has no 2-D shape whose axis ", Axis, " splits ", R.degree, " ways");
      Widths.insert(Shape.dim(Axis).dim_value());
    }
  if (N.op_type() != "Gemm" || N.input_size() < 3 || N.input(2).empty()) return Error::success();
  if (Consts.count(N.input(2)))
    return makeUsageError("tensor parallelism: Gemm '", N.name(),
                          "' reads its weight as a graph input but its bias as a constant");
  if (!Column && R.shard > 0) Renamed[V][2] = "";
  return Error::success();
}

/// A Reshape shape between the projections with the shard's sizes: the
/// head count (the entry before the head width, or before a trailing -1)
/// becomes heads / t, else an entry equal to a column width becomes
/// width / t (Megatron-LM §3: each GPU holds h/t heads).
std::vector<int64_t> Sharder::shardShape(std::vector<int64_t> S) const {
  const int64_t H = R.block->heads;
  for (size_t I = 0; I + 1 < S.size(); ++I)
    if (H > 1 && S[I] == H &&
        ((S[I + 1] > 0 && Widths.count(S[I] * S[I + 1])) || (S[I + 1] == -1 && I + 2 == S.size()))) {
      S[I] = H / R.degree;
      return S;
    }
  for (int64_t &D : S)
    if (D > 1 && Widths.count(D)) {
      D /= R.degree;
      return S;
    }
  return S;
}

Error Sharder::reshapeHeads(int V) {
  const onnx::NodeProto &N = G.node(V);
  if (N.input_size() < 2) return Error::success();
  auto It = Consts.find(N.input(1));
  if (It == Consts.end()) {
    // A shape the graph builds: a Concat of constants and values read off
    // the shards' own tensors (those follow the shard by themselves).
    for (int I = 0; I < G.node_size(); ++I)
      if (G.node(I).op_type() == "Concat" && G.node(I).output_size() == 1 &&
          G.node(I).output(0) == N.input(1))
        return concatShape(V, I);
    return makeUsageError("tensor parallelism: Reshape '", N.name(),
                          "' inside a split block reads a shape that is neither a constant nor a Concat");
  }
  const std::vector<int64_t> Old = int64s(*It->second), S = shardShape(Old);
  if (S == Old) return Error::success();
  onnx::TensorProto T;
  T.set_name(tag(N.input(1)));
  T.set_data_type(onnx::TensorProto::INT64);
  T.add_dims(static_cast<int64_t>(S.size()));
  for (int64_t D : S) T.add_int64_data(D);
  replace(V, 1, std::move(T));
  return Error::success();
}

/// Reshape V's shape is Concat C's output: C's constant pieces equal to a
/// column width shrink t ways. C must feed split nodes only (a reader
/// after the all-reduce needs the full width).
Error Sharder::concatShape(int V, int C) {
  const onnx::NodeProto &N = G.node(C);
  for (int Reader : Readers[N.output(0)])
    if (!std::count(R.block->sharded.begin(), R.block->sharded.end(), Reader))
      return makeUsageError("tensor parallelism: the shape '", N.output(0), "' of Reshape '",
                            G.node(V).name(), "' is also read by '", G.node(Reader).name(),
                            "', outside the split block");
  for (int I = 0; I < N.input_size(); ++I) {
    auto It = Consts.find(N.input(I));
    if (It == Consts.end() || It->second->data_type() != onnx::TensorProto::INT64) continue;
    const std::vector<int64_t> Old = int64s(*It->second);
    std::vector<int64_t> S = Old;
    for (int64_t &D : S)
      if (D > 1 && Widths.count(D)) D /= R.degree;
    if (S == Old) continue;
    onnx::TensorProto T = *It->second;
    T.set_name(tag(N.input(I)));
    T.clear_raw_data();
    T.clear_int64_data();
    for (int64_t D : S) T.add_int64_data(D);
    replace(C, I, std::move(T));
  }
  return Error::success();
}

int64_t Sharder::groupsAfter(int V) const { return fusedOutputs(G, *R.block, V); }

/// A Split's "split" sizes are the shard's: each / t.
Error Sharder::splitSizes(int V) {
  const onnx::NodeProto &N = G.node(V);
  if (N.input_size() >= 2 && !N.input(1).empty())
    return makeUsageError("tensor parallelism: Split '", N.name(),
                          "' reads its sizes as an input; not sharded yet");
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == "split") {
      std::vector<int64_t> S(A.ints().begin(), A.ints().end());
      for (int64_t &D : S) {
        if (D % R.degree != 0)
          return makeUsageError("tensor parallelism: Split '", N.name(), "': ", D, " does not split ",
                                R.degree, " ways");
        D /= R.degree;
      }
      NewInts[V] = S;
    }
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
    if (It->second->dims(Last) > 1 && Widths.count(It->second->dims(Last))) {
      auto F = FusedGroups.find(It->second->dims(Last));
      replace(V, I,
              slice(*It->second, Last, R.degree, R.shard, tag(N.input(I)),
                    F == FusedGroups.end() ? 1 : F->second));
    }
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
      else if (G.node(V).op_type() == "Split") ONNXP_RETURN_IF_ERROR(splitSizes(V));
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
    for (int I = 0; I < N.input_size(); ++I) N.set_input(I, renamed(N.input(I), false));
    for (int I = 0; I < N.output_size(); ++I) N.set_output(I, renamed(N.output(I), true));
    for (auto &[Slot, Name] : Renamed[V]) N.set_input(Slot, Name);
    while (N.input_size() && N.input(N.input_size() - 1).empty()) N.mutable_input()->RemoveLast();
    if (NewInts.count(V))
      for (onnx::AttributeProto &A : *N.mutable_attribute())
        if (A.name() == "split") {
          A.clear_ints();
          for (int64_t D : NewInts[V]) A.add_ints(D);
        }
    if (V == (R.block ? R.block->row : -1) && R.degree > 1) N.set_output(0, partialName(RowOutput, R.shard));
    for (const std::string &I : N.input()) Read.insert(I);
    *OG.add_node() = std::move(N);
  }
  for (const onnx::TensorProto &T : G.initializer())
    if (Read.count(T.name())) *OG.add_initializer() = T;
  for (auto &[Name, T] : Added)
    if (Read.count(Name)) *OG.add_initializer() = T;
  auto AddValue = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *To, const std::string &Name,
                      const std::string &Typed) { return addValue(Types, To->Add(), Name, Typed); };
  for (const std::string &I : R.inputs)
    ONNXP_RETURN_IF_ERROR(AddValue(OG.mutable_input(), renamed(I, false), I));
  for (const std::string &O : R.outputs)
    ONNXP_RETURN_IF_ERROR(
        AddValue(OG.mutable_output(), O == RowOutput ? partialName(O, R.shard) : renamed(O, true), O));
  return Out;
}

/// V: tensor Typed of the input (of type Types' entry) under Name.
Error Sharder::addValue(const std::map<std::string, onnx::TypeProto> &Types, onnx::ValueInfoProto *V,
                        const std::string &Name, const std::string &Typed) const {
  auto It = Types.find(Typed);
  if (It == Types.end()) return makeInternalError("tensor parallelism: no type for '", Typed, "'");
  V->set_name(Name);
  *V->mutable_type() = It->second;
  if (!R.perShard.count(Typed)) return Error::success();
  // A shard's own tensor: a sliced parameter (or its gradient buffer) has
  // the slice's shape; an activation's split axis is not tracked, so it is
  // typed by its element type only.
  auto Axis = R.slicedAxes.find(Typed);
  auto *Shape = V->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (Axis == R.slicedAxes.end() || Axis->second >= Shape->dim_size() ||
      !Shape->dim(Axis->second).has_dim_value())
    V->mutable_type()->mutable_tensor_type()->clear_shape();
  else Shape->mutable_dim(Axis->second)->set_dim_value(Shape->dim(Axis->second).dim_value() / R.degree);
  return Error::success();
}

/// T as this shard names it: its own copy (perShard), or its partial sum
/// when it is an output of the backward's reductions (partials).
std::string Sharder::renamed(const std::string &T, bool Output) const {
  if (T.empty()) return T;
  if (R.perShard.count(T)) return tag(T);
  if (Output && R.partials.count(T)) return partialName(T, R.shard);
  return T;
}

} // namespace

/// How many tensors a column projection's output fuses: the outputs of
/// the Split (among the split nodes) its output reaches through Reshapes
/// and bias Adds, else 1.
int64_t onnxp::fusedOutputs(const onnx::GraphProto &G, const ShardBlock &B, int V) {
  std::map<std::string, std::vector<int>> Readers;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &T : G.node(I).input()) Readers[T].push_back(I);
  std::set<std::string> Seen = {G.node(V).output(0)};
  std::vector<std::string> Work = {G.node(V).output(0)};
  while (!Work.empty()) {
    const std::string T = Work.back();
    Work.pop_back();
    auto It = Readers.find(T);
    if (It == Readers.end()) continue;
    for (int I : It->second) {
      const std::string &Op = G.node(I).op_type();
      if (!std::count(B.sharded.begin(), B.sharded.end(), I)) continue;
      if (Op == "Split") return std::max(1, G.node(I).output_size());
      if (Op != "Reshape" && Op != "Add") continue;
      for (const std::string &O : G.node(I).output())
        if (Seen.insert(O).second) Work.push_back(O);
    }
  }
  return 1;
}

std::string onnxp::partialName(const std::string &Y, int K) { return Y + ".partial" + std::to_string(K); }

std::string onnxp::shardName(const std::string &T, int K, int Degree) {
  return T + ".tp" + std::to_string(K) + "of" + std::to_string(Degree);
}

Expected<std::map<std::string, int>> onnxp::parameterAxes(const onnx::GraphProto &G, const ShardBlock &B) {
  std::set<std::string> Inputs;
  for (const onnx::ValueInfoProto &V : G.input()) Inputs.insert(V.name());
  for (const onnx::TensorProto &T : G.initializer()) Inputs.erase(T.name());
  std::map<std::string, int> Axes;
  auto Add = [&](int V, bool Column) -> Error {
    const onnx::NodeProto &N = G.node(V);
    if (N.input_size() < 2 || !Inputs.count(N.input(1))) return Error::success();
    if (Column && fusedOutputs(G, B, V) > 1)
      return makeUsageError("tensor parallelism: the fused projection '", N.name(),
                            "' reads its weight as a graph input; its slices are not written yet");
    // The weight is [in, out], or [out, in] under a Gemm's transB.
    const int OutAxis = N.op_type() == "Gemm" && attrInt(N, "transB") != 0 ? 0 : 1;
    Axes[N.input(1)] = Column ? OutAxis : 1 - OutAxis;
    if (Column && N.op_type() == "Gemm" && N.input_size() >= 3 && Inputs.count(N.input(2)))
      Axes[N.input(2)] = 0;
    return Error::success();
  };
  for (int V : B.column) ONNXP_RETURN_IF_ERROR(Add(V, true));
  ONNXP_RETURN_IF_ERROR(Add(B.row, false));
  return Axes;
}

Expected<onnx::ModelProto> onnxp::shardModel(const onnx::ModelProto &M, const ShardRequest &R,
                                             const std::map<std::string, onnx::TypeProto> &Types) {
  if (R.degree > 1 && !R.block) return makeInternalError("tensor parallelism: t > 1 without a block");
  Sharder S(M, R);
  return S.run(Types);
}
