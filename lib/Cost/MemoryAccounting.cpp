//===- Cost/MemoryAccounting.cpp - What a training step holds in memory -===//
//
// Ownership of a parameter follows the cost-graph builder: the first node in
// graph order that reads it owns it (and its gradient and optimizer state),
// so a shared parameter is charged once. Which weights there are and which
// train: the one rule of Analysis/Trainable.h (weights held in Constant
// nodes included).
//
// A forward activation is "saved" when a backward node reads it: the edges
// of the graph say so directly, both for ORT graphs (ConvGrad reads X) and
// for derived ones (deriveBackward adds a forward -> backward edge carrying
// the node's outputs). Each tensor counts once per producer.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Cost/MemoryAccounting.h"

#include "onnx-partition/Analysis/Trainable.h"
#include "onnx-partition/Analysis/TrainingGraph.h"
#include "onnx-partition/Cost/PipelineInFlight.h"
#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <map>
#include <set>

using namespace onnxp;

Expected<OptimizerKind> onnxp::parseOptimizer(const std::string &Name) {
  if (Name == "sgd") return OptimizerKind::SGD;
  if (Name == "momentum") return OptimizerKind::Momentum;
  if (Name == "adam") return OptimizerKind::Adam;
  return makeUsageError("--optimizer '", Name, "' is not one of sgd, momentum, adam");
}

const char *onnxp::optimizerName(OptimizerKind K) {
  switch (K) {
  case OptimizerKind::SGD: return "sgd";
  case OptimizerKind::Momentum: return "momentum";
  case OptimizerKind::Adam: return "adam";
  }
  return "?";
}

double onnxp::optimizerStateFactor(OptimizerKind K) {
  switch (K) {
  case OptimizerKind::SGD: return 0;
  case OptimizerKind::Momentum: return 1;
  case OptimizerKind::Adam: return 2;
  }
  return 0;
}

void onnxp::accountMemory(CostGraph &G, const OnnxModel *M, OptimizerKind Opt, bool Liveness) {
  if (!M) return;
  const bool Training = G.isTraining();
  // Trainable bytes owned per ONNX node index (first reader owns): the
  // rule of Analysis/Trainable.h (every parameter when not training: the
  // charges below are then zero).
  std::map<std::string, double> TrainableBytes;
  const bool Native = Training && hasNativeBackward(G);
  for (const ParameterInfo &P : modelWeights(*M))
    if (!Training || isTrainable(P, Training, Native)) TrainableBytes[P.name] = P.bytes;
  const onnx::GraphProto &OG = M->graph();
  std::vector<double> OwnedTrainable(OG.node_size(), 0);
  std::set<std::string> Owned;
  for (int I = 0; I < OG.node_size(); ++I)
    for (const std::string &In : OG.node(I).input()) {
      auto It = TrainableBytes.find(In);
      if (It != TrainableBytes.end() && Owned.insert(In).second) OwnedTrainable[I] += It->second;
    }

  // Issue 22, item 4: what one more copy of a shared parameter holds, and
  // which node's terms hold the first copy (the first reader owns).
  for (SharedParameter &SP : G.sharedParameters) {
    auto It = TrainableBytes.find(SP.name);
    const double Trainable = Training && It != TrainableBytes.end() ? It->second : 0;
    SP.gradBytes = Trainable;
    SP.optimizerBytes = optimizerStateFactor(Opt) * Trainable;
    SP.owner = -1;
    int First = OG.node_size();
    for (int I = 0; I < OG.node_size() && First == OG.node_size(); ++I)
      for (const std::string &In : OG.node(I).input())
        if (In == SP.name) First = I;
    for (size_t V = 0; V < G.numNodes(); ++V)
      for (int O : G.node(V).onnxNodes)
        if (O == First) SP.owner = static_cast<int>(V);
  }

  for (size_t V = 0; V < G.numNodes(); ++V) {
    CostNode &N = G.node(V);
    N.gradBytes = N.optimizerBytes = N.savedBytes = 0;
    if (!Training) {
      // Liveness: outputs are charged while they live (livenessMemory).
      N.memBytes = N.paramBytes + (Liveness ? 0 : N.outputBytes);
      continue;
    }
    double Trainable = 0;
    for (int O : N.onnxNodes) Trainable += OwnedTrainable[O];
    N.gradBytes = Trainable;
    N.optimizerBytes = optimizerStateFactor(Opt) * Trainable;
    if (N.isForwardSide()) {
      std::set<std::string> Tensors;
      for (int EId : G.outEdges(V)) {
        const CostEdge &E = G.edge(EId);
        if (!G.node(E.dst).isBackward()) continue;
        // Derived graphs mark the saved activations with an unnamed edge.
        if (E.tensor.empty() || Tensors.insert(E.tensor).second) N.savedBytes += E.bytes;
      }
    }
    N.memBytes = N.paramBytes + N.gradBytes + N.optimizerBytes + N.savedBytes;
  }
}

MemorySummary onnxp::summarizeMemory(const CostGraph &G) {
  MemorySummary S;
  for (const CostNode &N : G.nodes()) {
    S.parameters += N.paramBytes;
    S.gradients += N.gradBytes;
    S.optimizerState += N.optimizerBytes;
    S.savedActivations += N.savedBytes;
    S.outputs += N.outputBytes;
    S.peakWorkspace = std::max(S.peakWorkspace, N.workspaceBytes);
    S.charged += N.memBytes;
  }
  return S;
}

//===--- Peak memory by liveness (issue 22) ------------------------------===//

namespace {
/// One tensor: its producer, bytes, whether it is a saved activation, and
/// its readers.
struct Tensor {
  int producer = -1;
  double bytes = 0;
  bool saved = false;
  std::vector<int> readers;
};

std::vector<Tensor> collectTensors(const CostGraph &G) {
  std::vector<Tensor> Out;
  std::map<std::pair<int, std::string>, size_t> Index;
  for (size_t EId = 0; EId < G.numEdges(); ++EId) {
    const CostEdge &E = G.edge(EId);
    size_t T;
    if (E.tensor.empty()) { // workload and derived saved-activation edges: one tensor each
      T = Out.size();
      Out.push_back({E.src, E.bytes, false, {}});
    } else {
      auto [It, New] = Index.try_emplace({E.src, E.tensor}, Out.size());
      if (New) Out.push_back({E.src, E.bytes, false, {}});
      T = It->second;
      Out[T].bytes = std::max(Out[T].bytes, E.bytes);
    }
    Out[T].readers.push_back(E.dst);
    if (G.node(E.src).isForwardSide() && G.node(E.dst).isBackward()) Out[T].saved = true;
  }
  return Out;
}

/// Bytes a node produces that no edge reads (graph outputs, unused outputs).
std::vector<double> unreadOutputs(const CostGraph &G, const std::vector<Tensor> &Ts) {
  std::vector<double> Read(G.numNodes(), 0);
  for (const Tensor &T : Ts) Read[T.producer] += T.bytes;
  std::vector<double> Out(G.numNodes(), 0);
  for (size_t V = 0; V < G.numNodes(); ++V) Out[V] = std::max(0.0, G.node(V).outputBytes - Read[V]);
  return Out;
}

/// Per device and global step: bytes of saved / other tensors live there.
struct LiveProfile {
  std::vector<std::vector<double>> saved, other;
};

LiveProfile liveProfile(const CostGraph &G, const std::vector<int> &Device, int D,
                        const std::vector<int> &Pos, const std::vector<Tensor> &Ts) {
  const size_t N = G.numNodes();
  // Difference arrays over global steps, one per device and kind.
  LiveProfile L{std::vector<std::vector<double>>(D, std::vector<double>(N + 1, 0)),
                std::vector<std::vector<double>>(D, std::vector<double>(N + 1, 0))};
  std::map<int, int> LastOn; // device -> last reader step there
  for (const Tensor &T : Ts) {
    LastOn.clear();
    const int Home = Device[T.producer], Made = Pos[T.producer];
    LastOn[Home] = Made; // lives on its producer's device at least while made
    for (int R : T.readers) {
      auto [It, New] = LastOn.try_emplace(Device[R], Pos[R]);
      if (!New) It->second = std::max(It->second, Pos[R]);
    }
    for (const auto &[Dev, Last] : LastOn) {
      const int First = Dev == Home ? Made : Made + 1; // received: after the eager send
      if (First > Last) continue;
      std::vector<double> &Diff = T.saved ? L.saved[Dev] : L.other[Dev];
      Diff[First] += T.bytes;
      Diff[Last + 1] -= T.bytes;
    }
  }
  for (int Dev = 0; Dev < D; ++Dev)
    for (size_t S = 1; S <= N; ++S) {
      L.saved[Dev][S] += L.saved[Dev][S - 1];
      L.other[Dev][S] += L.other[Dev][S - 1];
    }
  return L;
}

std::vector<int> positions(const CostGraph &G, const std::vector<int> &Order) {
  std::vector<int> Pos(G.numNodes(), 0);
  for (size_t S = 0; S < Order.size(); ++S) Pos[Order[S]] = static_cast<int>(S);
  return Pos;
}

std::vector<int> orderOrTopological(const CostGraph &G, const std::vector<int> &Order) {
  if (!Order.empty()) return Order;
  Expected<std::vector<int>> T = G.topologicalOrder();
  if (T) return *T;
  // A cyclic graph has no schedule; fall back to node order (the
  // validator reports the cycle elsewhere).
  (void)T.takeError();
  std::vector<int> Ids(G.numNodes());
  for (size_t V = 0; V < Ids.size(); ++V) Ids[V] = static_cast<int>(V);
  return Ids;
}
} // namespace

bool onnxp::isSavedActivation(const CostGraph &G, int Producer, const std::string &Tensor) {
  if (!G.node(Producer).isForwardSide()) return false;
  for (int EId : G.outEdges(Producer)) {
    const CostEdge &E = G.edge(EId);
    if (E.tensor == Tensor && G.node(E.dst).isBackward()) return true;
  }
  return false;
}

std::vector<DeviceMemory> onnxp::livenessMemory(const CostGraph &G, const std::vector<int> &Device,
                                                int NumDevices, const std::vector<int> &OrderIn,
                                                const LivenessOptions &O) {
  std::vector<DeviceMemory> Out(std::max(NumDevices, 0));
  if (Device.size() != G.numNodes() || NumDevices <= 0) return Out;
  const std::vector<int> Order = orderOrTopological(G, OrderIn);
  const std::vector<int> Pos = positions(G, Order);
  const std::vector<Tensor> Ts = collectTensors(G);
  const std::vector<double> Unread = unreadOutputs(G, Ts);
  const LiveProfile L = liveProfile(G, Device, NumDevices, Pos, Ts);

  std::vector<double> SavedSum(NumDevices, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    const CostNode &N = G.node(V);
    DeviceMemory &M = Out[Device[V]];
    M.weights += N.paramBytes;
    M.gradients += N.gradBytes;
    M.optimizerState += N.optimizerBytes;
    SavedSum[Device[V]] += N.savedBytes;
  }
  // Issue 22, item 4: a shared parameter whose readers sit on several
  // devices has a copy on each device holding a reader (of it or of a
  // tensor derived from it), with its gradient and optimizer state; a device
  // that only accumulates a partial gradient holds the gradient buffer
  // (IR/CostGraph.h replicaHolders). Its owner's terms hold the first copy.
  for (const SharedParameter &SP : G.sharedParameters) {
    const ReplicaHolders H = replicaHolders(G, SP, Device);
    for (int Dev : H.devices) {
      if (SP.owner >= 0 && Device[SP.owner] == Dev) continue;
      Out[Dev].gradients += SP.gradBytes;
      if (!std::binary_search(H.weightDevices.begin(), H.weightDevices.end(), Dev)) continue;
      Out[Dev].weights += SP.weightBytes;
      Out[Dev].optimizerState += SP.optimizerBytes;
    }
  }
  std::vector<double> Best(NumDevices, -1);
  for (size_t S = 0; S < Order.size(); ++S) {
    const int V = Order[S], Dev = Device[V];
    const double Saved = L.saved[Dev][S];
    const double Other = L.other[Dev][S] + Unread[V] + G.node(V).workspaceBytes;
    if (Saved + Other > Best[Dev]) {
      Best[Dev] = Saved + Other;
      Out[Dev].savedActivations = Saved;
      Out[Dev].transient = Other;
      Out[Dev].peakNode = V;
    }
  }
  for (int Dev = 0; Dev < NumDevices; ++Dev) {
    DeviceMemory &M = Out[Dev];
    // seed 000 §3 (1F1B) / GPipe: k micro-batches' activations held at once.
    const int K = Dev < static_cast<int>(O.inFlight.size()) ? O.inFlight[Dev] : 1;
    M.inFlight = K > 1 ? (K - 1) * SavedSum[Dev] : 0;
    M.peak = M.weights + M.gradients + M.optimizerState + M.savedActivations + M.transient + M.inFlight;
  }
  return Out;
}

double onnxp::livenessReserve(const CostGraph &G) {
  const std::vector<int> Order = orderOrTopological(G, {});
  const std::vector<int> Pos = positions(G, Order);
  const std::vector<Tensor> Ts = collectTensors(G);
  const std::vector<double> Unread = unreadOutputs(G, Ts);
  const std::vector<int> One(G.numNodes(), 0);
  const LiveProfile L = liveProfile(G, One, 1, Pos, Ts);
  // Training charges saved activations in memBytes already; inference
  // charges no activation there.
  const bool Training = G.isTraining();
  double R = 0;
  for (size_t S = 0; S < Order.size(); ++S) {
    const int V = Order[S];
    double Live = L.other[0][S] + (Training ? 0 : L.saved[0][S]);
    R = std::max(R, Live + Unread[V] + G.node(V).workspaceBytes);
  }
  return R;
}

bool onnxp::hasTensorLiveness(const CostGraph &G) {
  for (const CostNode &N : G.nodes())
    if (!N.onnxNodes.empty()) return true;
  return false;
}

ResidentMemory onnxp::chainResidentMemory(const Chain &C, OptimizerKind Opt, size_t First, size_t Last) {
  ResidentMemory R;
  // Issue 37, item 4: the weights that train (Analysis/Trainable.h, as
  // the graph's accounting) have a gradient and optimizer state.
  for (size_t B = First; B < std::min(Last, C.size()); ++B) {
    R.weights += C.blocks[B].weightBytes;
    R.gradients += C.blocks[B].weightBytes - C.blocks[B].frozenBytes;
  }
  R.optimizerState = optimizerStateFactor(Opt) * R.gradients;
  return R;
}

std::string onnxp::describeResident(const ResidentMemory &R, OptimizerKind Opt) {
  return "weights " + humanBytes(R.weights) + " + gradients " + humanBytes(R.gradients) +
         " + optimizer state (" + optimizerName(Opt) + ") " + humanBytes(R.optimizerState);
}

std::vector<DeviceMemory> onnxp::planMemoryByTerm(const CostGraph &G, const Platform &P, const Plan &Pl) {
  const int D = P.numDevices();
  if (Pl.device.size() != G.numNodes()) return std::vector<DeviceMemory>(D);
  std::vector<DeviceMemory> Out;
  if (Pl.memoryModel == MemoryModel::Liveness) {
    Out = planLivenessMemory(G, Pl, D); // with the pipeline's in-flight micro-batches
  } else if (Pl.memoryModel == MemoryModel::Schedule && !Pl.scheduleMemory.empty()) {
    // A periodic pattern's simulator measured these at each GPU's peak.
    Out.assign(D, DeviceMemory());
    for (int Dev = 0; Dev < D && Dev < static_cast<int>(Pl.scheduleMemory.size()); ++Dev) {
      const ScheduleMemory &S = Pl.scheduleMemory[Dev];
      DeviceMemory &M = Out[Dev];
      M.weights = S.weights;
      M.gradients = S.gradients;
      M.savedActivations = S.savedActivations;
      M.inFlight = S.inFlight;
      M.transient = S.transient;
      M.peak = M.weights + M.gradients + M.savedActivations + M.inFlight + M.transient;
    }
  } else {
    Out.assign(D, DeviceMemory());
    for (size_t V = 0; V < G.numNodes(); ++V) {
      const CostNode &N = G.node(V);
      DeviceMemory &M = Out[Pl.device[V]];
      if (Pl.memoryModel == MemoryModel::Sum) {
        M.weights += N.paramBytes;
        M.gradients += N.gradBytes;
        M.optimizerState += N.optimizerBytes;
        M.savedActivations += N.savedBytes;
        M.transient += N.memBytes - N.paramBytes - N.gradBytes - N.optimizerBytes - N.savedBytes;
      }
    }
    for (int Dev = 0; Dev < D; ++Dev) {
      DeviceMemory &M = Out[Dev];
      M.peak = Pl.memoryModel == MemoryModel::Sum
                   ? M.weights + M.gradients + M.optimizerState + M.savedActivations + M.transient
                   : (Dev < static_cast<int>(Pl.usage.size()) ? Pl.usage[Dev].memory : 0);
    }
  }
  for (int Dev = 0; Dev < D; ++Dev)
    if (!P.isAccelerator(Dev)) Out[Dev] = DeviceMemory(); // host memory is not checked
  return Out;
}

bool onnxp::hasMemoryTerms(const DeviceMemory &M) {
  return M.weights > 0 || M.gradients > 0 || M.optimizerState > 0 || M.savedActivations > 0 || M.inFlight > 0;
}

std::string onnxp::describeDeviceMemory(const DeviceMemory &M) {
  std::string S;
  auto Add = [&](const char *Name, double B) {
    if (B > 0) S += (S.empty() ? "" : ", ") + std::string(Name) + " " + humanBytes(B);
  };
  Add("weights", M.weights);
  Add("gradients", M.gradients);
  Add("optimizer state", M.optimizerState);
  Add("saved activations", M.savedActivations);
  Add("transient", M.transient);
  Add("in-flight micro-batches", M.inFlight);
  return S.empty() ? "peak " + humanBytes(M.peak) : S + " (peak " + humanBytes(M.peak) + ")";
}
