//===- Transforms/FoldedCopies.cpp - A copy of each folded node per device ===//
//
// See FoldedCopies.h. Folded nodes are visited readers first (reverse graph
// order), so a folded node knows every device its folded readers sit on
// before its own devices are chosen; copies are written right after their
// original, which keeps the graph in topological order.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/FoldedCopies.h"

#include "onnx-partition/Transforms/PlacementFields.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

using namespace onnxp;

namespace {
/// The value ORT folds Shape(x) to: x's static dims, sliced by the
/// start/end attributes (opset 15), or nothing when x's shape is not known.
std::optional<std::vector<int64_t>> staticShapeValue(const OnnxModel &M, const onnx::NodeProto &N) {
  const TensorInfo *T = N.input_size() ? M.tensor(N.input(0)) : nullptr;
  if (!T || !T->fullyKnown()) return std::nullopt;
  const int64_t Rank = static_cast<int64_t>(T->dims.size());
  int64_t Start = 0, End = Rank;
  for (const auto &A : N.attribute()) {
    if (A.name() == "start") Start = A.i();
    if (A.name() == "end") End = A.i();
  }
  if (Start < 0) Start += Rank;
  if (End < 0) End += Rank;
  Start = std::clamp<int64_t>(Start, 0, Rank);
  End = std::clamp<int64_t>(End, 0, Rank);
  std::vector<int64_t> V;
  for (int64_t D = Start; D < End; ++D) V.push_back(T->dims[D]);
  return V;
}

/// The name of folded tensor T's copy on device D: T + the tag + D's name,
/// made unique with "_2", "_3"... when the model already has a tensor of
/// that name (issue 39, item 5: a tensor 'C/folded_copy_acc1' in the model
/// became a second producer of the copy's name, "the graph has a cycle").
class CopyNamer {
public:
  CopyNamer(const onnx::GraphProto &G, const std::vector<std::string> &DeviceNames)
      : DeviceNames(DeviceNames) {
    for (const auto &VI : G.input()) take(VI.name());
    for (const auto &VI : G.output()) take(VI.name());
    for (const auto &VI : G.value_info()) take(VI.name());
    for (const auto &T : G.initializer()) take(T.name());
    for (const auto &Node : G.node())
      for (const std::string &O : Node.output()) take(O);
  }

  std::string operator()(const std::string &T, int D) {
    auto [It, New] = Names.try_emplace({T, D});
    if (New) {
      const std::string Base = T + kFoldedCopyTag + DeviceNames[D];
      std::string Name = Base;
      for (int K = 2; Taken.count(Name); ++K) Name = Base + "_" + std::to_string(K);
      Taken.insert(Name);
      It->second = Name;
    }
    return It->second;
  }

private:
  void take(const std::string &Name) {
    if (!Name.empty()) Taken.insert(Name);
  }

  const std::vector<std::string> &DeviceNames;
  std::unordered_set<std::string> Taken;
  std::map<std::pair<std::string, int>, std::string> Names;
};

} // namespace

Expected<FoldedCopies> onnxp::copyFoldedNodes(const OnnxModel &M, const ModelPlacement &P,
                                              const std::vector<int> &Folded) {
  const onnx::GraphProto &OG = M.graph();
  const int N = OG.node_size();
  if (static_cast<int>(P.device.size()) != N)
    return makeInternalError("placement of ", P.device.size(), " nodes for a graph of ", N);
  std::vector<char> IsFolded(N, 0);
  for (int I : Folded) {
    if (I < 0 || I >= N) return makeInternalError("folded node ", I, " is not in the graph");
    IsFolded[I] = 1;
  }
  std::unordered_map<std::string, int> Producer;
  std::unordered_map<std::string, std::vector<int>> Readers;
  for (int I = 0; I < N; ++I) {
    for (const std::string &O : OG.node(I).output())
      if (!O.empty()) Producer[O] = I;
    std::set<std::string> Direct(OG.node(I).input().begin(), OG.node(I).input().end());
    for (const std::string &In : nodeDataInputs(OG.node(I))) {
      if (!Direct.count(In) && Producer.count(In) && IsFolded[Producer[In]])
        return makeInternalError("folded tensor '", In, "' is read inside a subgraph of node '",
                                 nodeDisplayName(OG, I), "'");
      Readers[In].push_back(I);
    }
  }
  int Fallback = 0; // a folded node nobody reads stays with the first placed node
  for (int I = 0; I < N; ++I)
    if (!IsFolded[I]) {
      Fallback = P.device[I];
      break;
    }

  // Devices needing each folded node, and where its original stays.
  std::vector<std::set<int>> Need(N);
  std::vector<int> Home(N, -1);
  for (int I = N - 1; I >= 0; --I) {
    if (!IsFolded[I]) continue;
    const onnx::NodeProto &ON = OG.node(I);
    for (const std::string &O : ON.output())
      if (auto It = Readers.find(O); !O.empty() && It != Readers.end())
        for (int U : It->second) {
          if (!IsFolded[U]) {
            Need[I].insert(P.device[U]);
            continue;
          }
          Need[I].insert(Need[U].begin(), Need[U].end());
          Need[I].insert(Home[U]);
        }
    // A Shape of a live tensor stays with that tensor, so it is not moved.
    int Live = -1;
    for (const std::string &In : ON.input())
      if (auto It = Producer.find(In); !In.empty() && It != Producer.end() && !IsFolded[It->second])
        Live = P.device[It->second];
    if (Live >= 0) Home[I] = Live;
    else Home[I] = Need[I].empty() ? Fallback : *Need[I].begin();
  }
  CopyNamer CopyName(OG, P.deviceNames);
  // The name of folded tensor T as read on device D.
  auto Version = [&](int F, const std::string &T, int D) { return D == Home[F] ? T : CopyName(T, D); };
  auto Rewire = [&](onnx::NodeProto &Node, int D) {
    for (int J = 0; J < Node.input_size(); ++J) {
      auto It = Producer.find(Node.input(J));
      if (Node.input(J).empty() || It == Producer.end() || !IsFolded[It->second]) continue;
      Node.set_input(J, Version(It->second, Node.input(J), D));
    }
  };

  FoldedCopies Out;
  Out.model = M.proto;
  onnx::GraphProto &G = *Out.model.mutable_graph();
  G.clear_node();
  ModelPlacement &MP = Out.placement;
  MP.deviceNames = P.deviceNames;
  MP.deviceNode = P.deviceNode;
  MP.localDeviceId = P.localDeviceId;
  MP.multiNode = P.multiNode;
  MP.replicaDevices = P.replicaDevices;
  std::vector<char> IsCopyOrFolded;
  Out.newIndex.assign(N, -1);
  for (int I = 0; I < N; ++I) {
    const onnx::NodeProto &ON = OG.node(I);
    const int D = IsFolded[I] ? Home[I] : P.device[I];
    Out.newIndex[I] = G.node_size();
    onnx::NodeProto &Orig = *G.add_node();
    Orig = ON;
    Rewire(Orig, D);
    MP.device.push_back(D);
    MP.inserted.push_back(0);
    IsCopyOrFolded.push_back(IsFolded[I]);
    if (!IsFolded[I]) continue;
    // A live input: a graph input or a tensor some placed node makes. Only a
    // Shape of a static shape folds with one; its copies are its value.
    bool Live = false;
    for (const std::string &In : ON.input()) {
      auto It = Producer.find(In);
      Live |= !In.empty() && (It == Producer.end() ? !M.isInitializer(In) : !IsFolded[It->second]);
    }
    std::optional<std::vector<int64_t>> V;
    if (Live && Need[I].size() > (Need[I].count(Home[I]) ? 1u : 0u)) {
      V = ON.op_type() == "Shape" ? staticShapeValue(M, ON) : std::nullopt;
      if (!V || ON.output_size() != 1)
        return makeInternalError("folded node '", nodeDisplayName(OG, I),
                                 "' reads a live tensor and is not a ", "Shape of a static shape");
    }
    for (int C : Need[I]) {
      if (C == Home[I]) continue;
      onnx::NodeProto &Copy = *G.add_node();
      const std::string Suffix = kFoldedCopyTag + P.deviceNames[C];
      if (Live) {
        Copy.set_op_type("Constant");
        auto *A = Copy.add_attribute();
        A->set_name("value");
        A->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto *T = A->mutable_t();
        T->set_data_type(onnx::TensorProto::INT64);
        T->add_dims(static_cast<int64_t>(V->size()));
        for (int64_t X : *V) T->add_int64_data(X);
        Copy.add_output(CopyName(ON.output(0), C));
      } else {
        Copy = ON;
        for (int J = 0; J < Copy.output_size(); ++J)
          if (!Copy.output(J).empty()) Copy.set_output(J, CopyName(Copy.output(J), C));
        Rewire(Copy, C);
      }
      Copy.set_name(nodeDisplayName(OG, I) + Suffix);
      MP.device.push_back(C);
      MP.inserted.push_back(1);
      IsCopyOrFolded.push_back(1);
      ++Out.copies;
    }
  }
  // Folded outputs that nothing reads any more (a Shape whose readers all
  // read copies) keep their value_info; copies get theirs by inference.
  ONNXP_RETURN_IF_ERROR(assignStages(G, MP));
  joinReaderStages(G, MP, IsCopyOrFolded);
  Out.joining = std::move(IsCopyOrFolded);
  return Out;
}

void onnxp::joinReaderStages(const onnx::GraphProto &G, ModelPlacement &MP,
                             const std::vector<char> &Joining) {
  // A joining node takes the earliest stage of its readers on its device,
  // readers first; then stage ids are made dense again in their order.
  std::unordered_map<std::string, std::vector<int>> NewReaders;
  for (int I = 0; I < G.node_size(); ++I)
    for (const std::string &In : G.node(I).input())
      if (!In.empty()) NewReaders[In].push_back(I);
  for (int I = G.node_size() - 1; I >= 0; --I) {
    if (I >= static_cast<int>(Joining.size()) || !Joining[I]) continue;
    int Best = -1;
    for (const std::string &O : G.node(I).output())
      if (auto It = NewReaders.find(O); !O.empty() && It != NewReaders.end())
        for (int U : It->second)
          if (MP.device[U] == MP.device[I] && (Best < 0 || MP.stage[U] < Best)) Best = MP.stage[U];
    if (Best >= 0) MP.stage[I] = Best;
  }
  std::map<int, int> Dense;
  for (int S : MP.stage) Dense.emplace(S, 0);
  std::vector<int> StageDevice;
  for (auto &[S, New] : Dense) {
    New = static_cast<int>(StageDevice.size());
    StageDevice.push_back(MP.stageDevice[S]);
  }
  for (int &S : MP.stage) S = Dense[S];
  MP.stageDevice = std::move(StageDevice);
}
