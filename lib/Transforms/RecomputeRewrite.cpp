//===- Transforms/RecomputeRewrite.cpp - An activation schedule in the graph -===//
//
// One walk over the plan's operations keeps, for every tensor a layer's
// nodes produce, the name under which it is available right now (or none):
// the original after the forward phase ran the layer, "<t>/recompute<n>"
// after the n-th copy, "<t>/prefetch" after a prefetch. F_all keeps all of a
// layer's outputs, F_ck and F_nograd only the one the next layer reads; B^k
// drops layer k's tensors. New nodes are queued and placed before the first
// backward node of the next backward step; a stable topological sort by
// position fixes the rest.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/Recompute.h"

#include "onnx-partition/Transforms/InsertTransfers.h"
#include "onnx-partition/Transforms/PlacementFields.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {

struct Rewriter {
  onnx::ModelProto &M;
  const std::vector<std::vector<int>> &Layers;
  const RematPlan &Plan;
  RecomputeRewriteResult R;

  int N = 0, L = 0;
  std::vector<int> LayerOf;                         // node -> layer (0: none)
  std::unordered_map<std::string, int> TensorLayer; // produced by a layer node
  std::vector<std::vector<std::string>> Outputs;    // layer -> its tensors
  std::vector<std::set<std::string>> Activation;    // layer -> tensors later layers read (a^k)
  std::vector<std::vector<int>> BackwardNodes;      // layer -> backward nodes
  std::unordered_map<std::string, std::string> Avail;
  std::unordered_map<std::string, std::string> Host; // offloaded tensor -> host copy
  std::unordered_set<std::string> Names;
  std::vector<onnx::NodeProto> Pending;
  std::vector<std::pair<double, onnx::NodeProto>> Placed; // (position, node)
  std::vector<int> Copies;
  std::vector<bool> Pinned; // a^k pinned by F_ck^{k+1} / F_all^{k+1} until B^{k+1}

  Rewriter(onnx::ModelProto &M, const std::vector<std::vector<int>> &Layers, const RematPlan &P)
      : M(M), Layers(Layers), Plan(P) {}

  std::string fresh(const std::string &Base) {
    std::string Name = Base;
    for (int I = 1; Names.count(Name); ++I) Name = Base + "_" + std::to_string(I);
    Names.insert(Name);
    return Name;
  }

  Error index() {
    const onnx::GraphProto &G = M.graph();
    N = G.node_size();
    L = int(Layers.size());
    if (L != int(Plan.layers.size()))
      return makeError("activation rewrite: the plan has ", Plan.layers.size(), " layers, the mapping ", L);
    LayerOf.assign(N, 0);
    Outputs.assign(L + 2, {});
    Activation.assign(L + 2, {});
    BackwardNodes.assign(L + 2, {});
    Copies.assign(L + 2, 0);
    Pinned.assign(L + 2, false);
    StoredAll.assign(L + 2, false);
    for (const auto &N2 : G.node())
      for (const auto &O : N2.output()) Names.insert(O);
    for (const auto &I : G.input()) Names.insert(I.name());
    for (const auto &I : G.initializer()) Names.insert(I.name());
    std::unordered_map<std::string, int> ByName;
    std::vector<int> Seen(N, 0);
    for (int K = 1; K <= L; ++K)
      for (int Idx : Layers[K - 1]) {
        if (Idx < 0 || Idx >= N)
          return makeError("activation rewrite: layer ", K, " names node ", Idx, ", not in the graph");
        if (Seen[Idx])
          return makeError("activation rewrite: node ", Idx, " is in layers ", Seen[Idx], " and ", K);
        Seen[Idx] = K;
        // A gradient node the mapping put in a layer (ORT's AccumulateGrad
        // reads and writes "*_grad" tensors) is a backward node of it, never
        // a forward node to keep or recompute: its output is no activation
        // (issue 25: rotor -o on transformer_lora_training failed on it).
        if (isBackward(G.node(Idx))) continue;
        LayerOf[Idx] = K;
        for (const auto &O : G.node(Idx).output()) {
          TensorLayer[O] = K;
          Outputs[K].push_back(O);
        }
        if (!G.node(Idx).name().empty()) ByName[G.node(Idx).name()] = Idx;
      }
    // a^k: outputs of layer k read by a later layer or by a forward node outside the layers (the loss).
    for (int Idx = 0; Idx < N; ++Idx) {
      const onnx::NodeProto &Nd = G.node(Idx);
      bool Backward = isBackward(Nd);
      for (const auto &In : Nd.input()) {
        auto It = TensorLayer.find(In);
        if (It == TensorLayer.end()) continue;
        if (!Backward && LayerOf[Idx] != It->second) Activation[It->second].insert(In);
      }
      if (!Backward || LayerOf[Idx]) continue;
      int K = 0;
      std::string Name = Nd.name();
      size_t Cut = Name.find("_Grad/");
      if (Cut != std::string::npos) {
        auto P = ByName.find(Name.substr(0, Cut));
        if (P != ByName.end()) K = LayerOf[P->second];
      }
      if (!K)
        for (const auto &In : Nd.input()) {
          auto It = TensorLayer.find(In);
          if (It != TensorLayer.end()) K = std::max(K, It->second);
        }
      if (K) BackwardNodes[K].push_back(Idx);
    }
    return Error::success();
  }

  /// ORT's gradient builder: "_Grad/" scopes, com.microsoft *Grad ops,
  /// readers of "*_grad" tensors, and (issue 25) readers and writers of its
  /// partial gradients "*_grad_<n>" (the Sum that adds them up, e.g.
  /// "/layer_norm1/Add_1_output_0_grad = Sum(..._grad_0, ..._grad_1)").
  static bool isGradientName(const std::string &T) {
    size_t P = T.rfind("_grad");
    if (P == std::string::npos || P == 0) return false;
    size_t End = P + 5;
    if (End == T.size()) return true;
    return T[End] == '_' && End + 1 < T.size() &&
           T.find_first_not_of("0123456789", End + 1) == std::string::npos;
  }
  static bool isBackward(const onnx::NodeProto &Nd) {
    if (Nd.name().find("_Grad/") != std::string::npos) return true;
    if (Nd.op_type().size() > 4 && Nd.op_type().find("Grad") != std::string::npos) return true;
    for (const auto &In : Nd.input())
      if (isGradientName(In)) return true;
    for (const auto &Out : Nd.output())
      if (isGradientName(Out)) return true;
    return false;
  }

  std::vector<std::string> group(int K, bool Stored) {
    std::vector<std::string> G;
    for (const std::string &T : Outputs[K])
      if (Stored ? Avail.count(T) : Activation[K].count(T)) G.push_back(T);
    return G;
  }

  void forwardLayer(int K, RematOpKind Kind, bool AfterLoss) {
    std::unordered_map<std::string, std::string> Local;
    int Copy = AfterLoss ? ++Copies[K] : 0;
    for (int Idx : Layers[K - 1]) {
      const onnx::NodeProto &Orig = M.graph().node(Idx);
      if (!AfterLoss) {
        for (const auto &O : Orig.output()) Local[O] = O;
        continue;
      }
      onnx::NodeProto C = Orig;
      C.set_name(
          fresh((Orig.name().empty() ? Orig.op_type() : Orig.name()) + "/recompute" + std::to_string(Copy)));
      for (int I = 0; I < C.input_size(); ++I) {
        const std::string &In = C.input(I);
        if (Local.count(In)) C.set_input(I, Local[In]);
        else if (TensorLayer.count(In)) C.set_input(I, need(In, C.name()));
      }
      for (int I = 0; I < C.output_size(); ++I) {
        std::string New = fresh(Orig.output(I) + "/recompute" + std::to_string(Copy));
        Local[Orig.output(I)] = New;
        R.recomputedTensors.push_back({Orig.output(I), New});
        C.set_output(I, New);
      }
      Pending.push_back(C);
      ++R.recomputedNodes;
    }
    for (const auto &[T, Name] : Local)
      if (Kind == RematOpKind::ForwardAll || Activation[K].count(T)) Avail[T] = Name;
      else Avail.erase(T);
    // F_ck / F_all keep their input until B^k; F_nograd drops an unkept one.
    if (Kind != RematOpKind::ForwardNoGrad) Pinned[K - 1] = true;
    else if (K > 1 && !Pinned[K - 1] && !StoredAll[K - 1])
      for (const std::string &T : Activation[K - 1]) Avail.erase(T);
    StoredAll[K] = Kind == RematOpKind::ForwardAll;
  }
  std::vector<bool> StoredAll = std::vector<bool>(4096, false);

  std::string need(const std::string &T, const std::string &Reader) {
    auto It = Avail.find(T);
    if (It == Avail.end()) {
      if (Missing.empty())
        Missing = "activation rewrite: " + Reader + " reads " + T +
                  ", which the schedule neither keeps, prefetches nor recomputes there";
      return T;
    }
    return It->second;
  }
  std::string Missing;

  onnx::NodeProto transferNode(PartitionOp Op, const std::string &In, const std::string &Out) {
    onnx::NodeProto Nd;
    Nd.set_op_type(partitionOpName(Op));
    Nd.set_domain(kPartitionDomain);
    Nd.set_name(fresh(std::string(partitionOpName(Op)) + "/" + In));
    Nd.add_input(In);
    Nd.add_output(Out);
    return Nd;
  }

  Error run() {
    ONNXP_RETURN_IF_ERROR(index());
    const onnx::GraphProto &G = M.graph();
    bool AfterLoss = false;
    std::set<std::string> Away;
    for (const RematOp &Op : Plan.ops) {
      switch (Op.kind) {
      case RematOpKind::ForwardAll:
      case RematOpKind::ForwardCheck:
      case RematOpKind::ForwardNoGrad: forwardLayer(Op.layer, Op.kind, AfterLoss); break;
      case RematOpKind::Loss:
        AfterLoss = true;
        for (const std::string &T : Away) Avail.erase(T);
        break;
      case RematOpKind::Offload: {
        if (Op.layer == 0) break; // the graph input stays where the runtime puts it
        for (const std::string &T : group(Op.layer, Op.stored)) {
          std::string Out = fresh(T + "/host");
          onnx::NodeProto Nd = transferNode(PartitionOp::Offload, Avail.count(T) ? Avail[T] : T, Out);
          // Right after its producer.
          int Producer = -1;
          for (int Idx : Layers[Op.layer - 1])
            for (const auto &O : G.node(Idx).output())
              if (O == T) Producer = Idx;
          Placed.push_back({Producer + 0.5, Nd});
          Host[T] = Out;
          Away.insert(T);
          ++R.offloadNodes;
        }
        break;
      }
      case RematOpKind::Prefetch: {
        if (Op.layer == 0) break;
        for (const std::string &T : Outputs[Op.layer]) {
          if (!Away.count(T)) continue;
          std::string Out = fresh(T + "/prefetch");
          Pending.push_back(transferNode(PartitionOp::Prefetch, Host[T], Out));
          Avail[T] = Out;
          Away.erase(T);
          ++R.prefetchNodes;
        }
        break;
      }
      case RematOpKind::Backward: {
        int K = Op.layer;
        double At = N;
        for (int Idx : BackwardNodes[K]) At = std::min(At, double(Idx));
        // A step without backward nodes keeps its queue for the next one
        // (placing it here too would write every queued copy twice).
        if (!BackwardNodes[K].empty()) {
          for (onnx::NodeProto &Nd : Pending) Placed.push_back({At - 0.5, Nd});
          Pending.clear();
        }
        for (int Idx : BackwardNodes[K]) {
          onnx::NodeProto *Nd = M.mutable_graph()->mutable_node(Idx);
          for (int I = 0; I < Nd->input_size(); ++I) {
            const std::string In = Nd->input(I);
            if (!TensorLayer.count(In)) continue;
            std::string V = need(In, Nd->name().empty() ? Nd->op_type() : Nd->name());
            if (V != In) {
              Nd->set_input(I, V);
              ++R.rewiredInputs;
            }
          }
        }
        for (const std::string &T : Outputs[K]) Avail.erase(T);
        StoredAll[K] = false;
        if (Pinned[K - 1]) {
          Pinned[K - 1] = false;
          if (K > 1 && !StoredAll[K - 1])
            for (const std::string &T : Activation[K - 1]) Avail.erase(T);
        }
        break;
      }
      case RematOpKind::Idle: break;
      }
      if (!Missing.empty()) return makeError(Missing);
    }
    for (onnx::NodeProto &Nd : Pending) Placed.push_back({double(N), Nd});
    if (R.offloadNodes) ensurePartitionOp(M, PartitionOp::Offload);
    if (R.prefetchNodes) ensurePartitionOp(M, PartitionOp::Prefetch);
    return order();
  }

  /// Original nodes at their index, new ones at their position; then a
  /// stable topological sort (Kahn, smallest position first).
  Error order() {
    onnx::GraphProto *G = M.mutable_graph();
    std::vector<std::pair<double, onnx::NodeProto>> All;
    for (int Idx = 0; Idx < G->node_size(); ++Idx) All.push_back({double(Idx), G->node(Idx)});
    for (auto &P : Placed) All.push_back(P);
    std::stable_sort(All.begin(), All.end(), [](const auto &A, const auto &B) { return A.first < B.first; });
    std::unordered_map<std::string, int> Producer;
    for (int I = 0; I < int(All.size()); ++I)
      for (const auto &O : All[I].second.output()) Producer[O] = I;
    std::vector<int> Indeg(All.size(), 0);
    std::vector<std::vector<int>> Users(All.size());
    for (int I = 0; I < int(All.size()); ++I)
      for (const auto &In : All[I].second.input()) {
        auto It = Producer.find(In);
        if (It == Producer.end() || It->second == I) continue;
        ++Indeg[I];
        Users[It->second].push_back(I);
      }
    std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
    for (int I = 0; I < int(All.size()); ++I)
      if (!Indeg[I]) Ready.push(I);
    std::vector<int> Order;
    while (!Ready.empty()) {
      int I = Ready.top();
      Ready.pop();
      Order.push_back(I);
      for (int U : Users[I])
        if (--Indeg[U] == 0) Ready.push(U);
    }
    if (Order.size() != All.size())
      return makeInternalError("activation rewrite: the rewritten graph has a cycle");
    G->clear_node();
    for (int I : Order) *G->add_node() = All[I].second;
    return Error::success();
  }
};

} // namespace

Expected<RecomputeRewriteResult>
onnxp::rewriteActivationSchedule(onnx::ModelProto &M, const std::vector<std::vector<int>> &LayerNodes,
                                 const RematPlan &Plan) {
  if (!Plan.feasible) return makeError("activation rewrite: the plan is infeasible");
  onnx::ModelProto Copy = M;
  Rewriter W(Copy, LayerNodes, Plan);
  ONNXP_RETURN_IF_ERROR(W.run());
  M = std::move(Copy);
  return W.R;
}

Expected<onnx::ModelProto> onnxp::recomputeCheckModel(const onnx::ModelProto &Rewritten,
                                                      const RecomputeRewriteResult &R,
                                                      const std::map<std::string, int64_t> &Dims,
                                                      unsigned Seed) {
  if (R.recomputedTensors.empty()) return makeError("recompute check: the schedule recomputes nothing");
  const onnx::GraphProto &G = Rewritten.graph();
  std::unordered_map<std::string, int> Producer;
  for (int I = 0; I < G.node_size(); ++I)
    for (const auto &O : G.node(I).output()) Producer[O] = I;
  // The nodes the pairs depend on.
  std::vector<bool> Keep(G.node_size(), false);
  std::vector<std::string> Work;
  for (const auto &[A, B] : R.recomputedTensors) Work.insert(Work.end(), {A, B});
  std::set<std::string> Leaves;
  while (!Work.empty()) {
    std::string T = Work.back();
    Work.pop_back();
    auto It = Producer.find(T);
    if (It == Producer.end()) {
      Leaves.insert(T);
      continue;
    }
    if (Keep[It->second]) continue;
    Keep[It->second] = true;
    for (const auto &In : G.node(It->second).input())
      if (!In.empty()) Work.push_back(In);
  }
  onnx::ModelProto M = Rewritten;
  onnx::GraphProto *Out = M.mutable_graph();
  Out->clear_node();
  for (int I = 0; I < G.node_size(); ++I)
    if (Keep[I]) *Out->add_node() = G.node(I);
  Out->clear_output();
  Out->clear_value_info();
  // Inputs the slice reads become initializers with seeded data.
  std::set<std::string> Initialized;
  for (const auto &I : G.initializer()) Initialized.insert(I.name());
  uint64_t State = Seed * 2654435761u + 1;
  auto Next = [&]() {
    State = State * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(State >> 11) / double(1ULL << 53);
  };
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> Inputs = G.input();
  Out->clear_input();
  for (const onnx::ValueInfoProto &In : Inputs) {
    if (!Leaves.count(In.name()) || Initialized.count(In.name())) continue;
    const onnx::TypeProto_Tensor &T = In.type().tensor_type();
    onnx::TensorProto *Init = Out->add_initializer();
    Init->set_name(In.name());
    Init->set_data_type(T.elem_type());
    int64_t Count = 1;
    for (const auto &D : T.shape().dim()) {
      int64_t V = D.has_dim_value() ? D.dim_value() : 1;
      if (D.has_dim_param()) {
        auto It = Dims.find(D.dim_param());
        if (It != Dims.end()) V = It->second;
      }
      Init->add_dims(V);
      Count *= V;
    }
    for (int64_t I = 0; I < Count; ++I) {
      double U = Next();
      switch (T.elem_type()) {
      case onnx::TensorProto::FLOAT: Init->add_float_data(float(2 * U - 1)); break;
      case onnx::TensorProto::DOUBLE: Init->add_double_data(2 * U - 1); break;
      case onnx::TensorProto::INT32:
      case onnx::TensorProto::BOOL: Init->add_int32_data(int32_t(U * 8)); break;
      case onnx::TensorProto::INT64: Init->add_int64_data(int64_t(U * 8)); break;
      default:
        return makeError("recompute check: input '", In.name(),
                         "' has an element type the check cannot fill");
      }
    }
  }
  for (const auto &[A, B] : R.recomputedTensors)
    for (const std::string &T : {A, B}) Out->add_output()->set_name(T);
  // Issue 20: before IR 4 every initializer must also be a graph input;
  // the check's initializers are not, and ONNX Runtime refused an IR 3
  // model ("Missing: Parameter193"). IR 4 is the first that allows them.
  if (M.ir_version() < 4) M.set_ir_version(4);
  return M;
}
