//===- Transforms/SinkCopies.cpp - Per-device copies of a parameter's sinks ===//
//
// See SinkCopies.h. Sinks are visited in graph order (topological), so a
// sink knows the devices holding a version of each input, its producers'
// copies included, before its own versions are made. Copies are written
// right after their original, which keeps the graph in topological order.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/SinkCopies.h"

#include "onnx-partition/IR/OnnxModel.h"
#include "onnx-partition/Transforms/FoldedCopies.h"
#include "onnx-partition/Transforms/PlacementFields.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

using namespace onnxp;

namespace {
bool isSum(const onnx::NodeProto &N) {
  return N.op_type() == "Sum" && (N.domain().empty() || N.domain() == "ai.onnx");
}

/// One version of a sink: the node (original or copy) on Device and what
/// it reads there.
struct Version {
  int device = -1;
  std::vector<std::string> inputs;
  std::string output;
};

/// The versions of one group's sinks, or why the group is not copied.
struct GroupPlan {
  std::string reason;
  std::map<int, std::vector<Version>> versions; ///< sink -> its versions, its own device's first
  std::string gradient;
  int gradientSink = -1;
};

class SinkCopier {
public:
  SinkCopier(const onnx::ModelProto &M, const ModelPlacement &P) : G(M.graph()), P(P) {
    for (int I = 0; I < G.node_size(); ++I) {
      for (const std::string &O : G.node(I).output())
        if (!O.empty()) Producer[O] = I;
      for (const std::string &In : nodeDataInputs(G.node(I))) Readers[In].insert(I);
    }
    for (const auto &O : G.output()) GraphOutputs.insert(O.name());
  }
  GroupPlan plan(const SinkGroup &Group) const;

private:
  const onnx::GraphProto &G;
  const ModelPlacement &P;
  std::unordered_map<std::string, int> Producer;
  std::unordered_map<std::string, std::set<int>> Readers;
  std::set<std::string> GraphOutputs;
};

GroupPlan SinkCopier::plan(const SinkGroup &Group) const {
  GroupPlan R;
  std::vector<int> Sinks = Group.sinks;
  std::sort(Sinks.begin(), Sinks.end());
  Sinks.erase(std::unique(Sinks.begin(), Sinks.end()), Sinks.end());
  const std::set<int> IsSink(Sinks.begin(), Sinks.end());
  auto Fail = [&](std::string Why) {
    R.reason = std::move(Why);
    R.versions.clear();
    return R;
  };
  // The form copied: single-output sinks whose intermediate outputs only
  // sinks read, and one gradient (read by no sink) that is a graph output
  // and read by nothing else.
  for (int S : Sinks) {
    const onnx::NodeProto &N = G.node(S);
    const std::string Name = "sink '" + nodeDisplayName(G, S) + "'";
    if (N.output_size() != 1 || N.output(0).empty() || hasSubgraph(N))
      return Fail(Name + " (" + N.op_type() + ") has several outputs or a subgraph");
    bool ReadBySink = false, ReadByOther = false;
    if (auto It = Readers.find(N.output(0)); It != Readers.end())
      for (int U : It->second) (IsSink.count(U) ? ReadBySink : ReadByOther) = true;
    if (ReadByOther)
      return Fail(Name + "'s output '" + N.output(0) +
                  "' is read by a node that is no sink of the parameter");
    if (ReadBySink) continue;
    if (R.gradientSink >= 0) return Fail("its sinks make several gradient tensors");
    if (!GraphOutputs.count(N.output(0)))
      return Fail("its gradient '" + N.output(0) + "' is not a graph output");
    R.gradient = N.output(0);
    R.gradientSink = S;
  }
  if (R.gradientSink < 0) return Fail("its sinks make no gradient tensor");
  // Per tensor a sink makes: its version on each device holding one.
  std::map<std::string, std::map<int, std::string>> Local;
  for (int S : Sinks) {
    const onnx::NodeProto &N = G.node(S);
    const int Home = P.device[S];
    const std::string Name = "sink '" + nodeDisplayName(G, S) + "'";
    std::vector<std::map<int, std::string>> In; // per input: device -> local name
    std::set<int> Devices{Home};
    for (const std::string &T : N.input()) {
      std::map<int, std::string> V;
      if (auto It = Local.find(T); It != Local.end()) {
        V = It->second;
      } else if (auto PIt = Producer.find(T); !T.empty() && PIt != Producer.end()) {
        V[P.device[PIt->second]] = T;
      }
      for (const auto &[D, Unused] : V) Devices.insert(D);
      In.push_back(std::move(V));
    }
    std::vector<Version> Vs;
    for (int D : Devices) {
      Version V;
      V.device = D;
      for (const std::map<int, std::string> &I : In)
        if (auto It = I.find(D); It != I.end()) V.inputs.push_back(It->second);
      if (V.inputs.empty()) {
        if (D == Home)
          return Fail(Name + " on " + P.deviceNames[Home] + " reads no partial gradient made there");
        continue;
      }
      if (V.inputs.size() != static_cast<size_t>(N.input_size()) && !isSum(N))
        return Fail(Name + " (" + N.op_type() +
                    ") reads partial gradients of several devices and is not a Sum");
      const std::string &Out = N.output(0);
      V.output =
          D == Home ? Out : Out + (S == R.gradientSink ? kPartialTag : kSinkCopyTag) + P.deviceNames[D];
      Local[Out][D] = V.output;
      // Its own device's version first: the original keeps its place.
      if (D == Home) Vs.insert(Vs.begin(), std::move(V));
      else Vs.push_back(std::move(V));
    }
    R.versions[S] = std::move(Vs);
  }
  return R;
}
} // namespace

std::string onnxp::sinkCopyOriginal(const std::string &Name) {
  for (const char *Tag : {kSinkCopyTag, kPartialTag})
    if (size_t At = Name.rfind(Tag); At != std::string::npos) return Name.substr(0, At);
  return Name;
}

Expected<SinkCopies> onnxp::copySinks(const onnx::ModelProto &M, const ModelPlacement &P,
                                      const std::vector<SinkGroup> &Groups,
                                      const std::vector<char> &Joining) {
  const onnx::GraphProto &OG = M.graph();
  const int N = OG.node_size();
  if (static_cast<int>(P.device.size()) != N)
    return makeInternalError("placement of ", P.device.size(), " nodes for a graph of ", N);
  SinkCopier Copier(M, P);
  SinkCopies Out;
  std::map<int, const Version *> Original; // sink -> its rewired original
  std::map<int, std::vector<const Version *>> Copies;
  std::vector<GroupPlan> Plans;
  Plans.reserve(Groups.size());
  for (const SinkGroup &Group : Groups) {
    for (int S : Group.sinks)
      if (S < 0 || S >= N)
        return makeInternalError("sink ", S, " of '", Group.parameter, "' is not in the graph");
    Plans.push_back(Copier.plan(Group));
    const GroupPlan &GP = Plans.back();
    WrittenSinks W;
    W.parameter = Group.parameter;
    W.reason = GP.reason;
    if (GP.reason.empty()) {
      W.gradient = GP.gradient;
      std::map<int, std::string> Partials;
      for (const Version &V : GP.versions.at(GP.gradientSink)) Partials[V.device] = V.output;
      for (const auto &[D, T] : Partials) W.partials.emplace_back(P.deviceNames[D], T);
      for (const auto &[S, Vs] : GP.versions) {
        if (Original.count(S))
          return makeInternalError("node '", nodeDisplayName(OG, S), "' is a sink of two parameters");
        Original[S] = &Vs.front();
        for (size_t K = 1; K < Vs.size(); ++K) Copies[S].push_back(&Vs[K]);
        W.copies += Vs.size() - 1;
      }
    }
    Out.groups.push_back(std::move(W));
  }

  Out.model = M;
  onnx::GraphProto &G = *Out.model.mutable_graph();
  G.clear_node();
  ModelPlacement &MP = Out.placement;
  MP = P;
  MP.device.clear();
  MP.inserted.clear();
  std::vector<char> Join;
  Out.newIndex.assign(N, -1);
  for (int I = 0; I < N; ++I) {
    const onnx::NodeProto &ON = OG.node(I);
    Out.newIndex[I] = G.node_size();
    onnx::NodeProto &Orig = *G.add_node();
    Orig = ON;
    MP.device.push_back(P.device[I]);
    MP.inserted.push_back(P.inserted[I]);
    Join.push_back(I < static_cast<int>(Joining.size()) ? Joining[I] : 0);
    auto OIt = Original.find(I);
    if (OIt == Original.end()) continue;
    // The original reads only its own device's partials.
    Orig.clear_input();
    for (const std::string &T : OIt->second->inputs) Orig.add_input(T);
    for (const Version *V : Copies[I]) {
      onnx::NodeProto &Copy = *G.add_node();
      Copy = ON;
      Copy.set_name(nodeDisplayName(OG, I) + kSinkCopyTag + P.deviceNames[V->device]);
      Copy.clear_input();
      for (const std::string &T : V->inputs) Copy.add_input(T);
      Copy.set_output(0, V->output);
      MP.device.push_back(V->device);
      MP.inserted.push_back(1);
      Join.push_back(0);
    }
  }
  // Each partial gradient other than the original's is a graph output, typed
  // as the gradient.
  for (const WrittenSinks &W : Out.groups) {
    const onnx::ValueInfoProto *Grad = nullptr;
    for (const auto &O : OG.output())
      if (O.name() == W.gradient) Grad = &O;
    for (const auto &[Dev, T] : W.partials) {
      if (T == W.gradient || !Grad) continue;
      onnx::ValueInfoProto *VI = G.add_output();
      *VI = *Grad;
      VI->set_name(T);
    }
  }
  ONNXP_RETURN_IF_ERROR(assignStages(G, MP));
  joinReaderStages(G, MP, Join);
  return Out;
}
