//===- API/PiperGraphStages.cpp - --emit-stages of a piper plan -----------===//
//
// See PiperGraphStages.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/API/PiperGraphStages.h"

#include "PiperRecompute.h"

#include "onnx-partition/Transforms/ExtractStages.h"
#include "onnx-partition/Transforms/ShardTensorParallel.h"
#include "onnx-partition/Transforms/ShardingSpecs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

using nlohmann::json;
using namespace onnxp;
namespace fs = std::filesystem;

namespace {

/// A run of one stage's nodes between two all-reduces, written once per
/// shard (Degree times) when it holds a block.
struct Piece {
  int stage = 0, index = 0;
  std::vector<int> nodes; ///< ONNX node indices, graph order
  int block = -1;         ///< into Blocks; -1: no split
  int degree = 1;
  std::vector<std::string> inputs, outputs;
  int firstId = 0;       ///< pipeline.json id of shard 0; shard k is firstId + k
  std::string part;      ///< a training graph's "forward" or "backward" piece; empty: cut at blocks
  bool numbered = false; ///< a tensor-parallel training stage's piece: part + index
  std::vector<std::string> partials; ///< tensors it makes partial sums of (degree > 1): all-reduced
};

class StageWriter {
public:
  StageWriter(const CostGraph &G, const OnnxModel &M, const PiperGraphRun &Run, const PiperGraphPlan &Plan)
      : G(G), M(M), Run(Run), Plan(Plan) {}

  Expected<int> write(const PiperGraphOptions &PO, const std::string &Dir, OutputTransaction &Tx);
  Expected<onnx::ModelProto> annotated();

private:
  const CostGraph &G;
  const OnnxModel &M;
  const PiperGraphRun &Run;
  const PiperGraphPlan &Plan;
  // The model written: the input's, on a training graph with the plan's
  // recomputed layers rewritten (PiperRecompute.h).
  onnx::ModelProto Written;
  PiperRecompute Recompute;
  bool Training = false;          // the model has backward ONNX nodes
  std::vector<int> NodeStage;     // written ONNX node -> plan stage (-1: in no layer)
  std::vector<char> BackwardNode; // written ONNX node -> backward or optimizer (or a recomputed copy)
  std::vector<ShardBlock> Blocks; // the split blocks of stages with t > 1
  std::vector<int> BlockStage;    // Blocks[i]'s stage
  std::vector<Piece> Pieces;
  std::set<std::string> Initializers;
  std::map<std::string, int> Producer;     // tensor -> piece making it
  std::map<std::string, int> ProducerNode; // tensor -> ONNX node making it
  // A training graph's tensor-parallel stages: the tensors each shard holds
  // its own of (ShardRequest::perShard), by block; the sliced parameters
  // and gradient buffers (graph inputs), by axis; the buffers whose shards
  // the runner concatenates for the check.
  std::map<std::string, int> PerShard;
  std::map<std::string, int> SlicedAxes;
  std::vector<std::pair<std::string, int>> Gathered; // buffer, block

  bool isOwn(const Piece &P, const std::string &T) const {
    return PerShard.count(T) || (P.degree > 1 && std::count(P.partials.begin(), P.partials.end(), T));
  }
  const onnx::GraphProto &graph() const { return Written.graph(); }
  Error assignNodes();
  Error rewriteRecomputed();
  Error cutStage(int S);
  Error cutTraining();
  Error markBlock(int B);
  Error cutBackward(int S);
  Expected<int> backwardBlock(int I, int S) const;
  Error noteShardedBackward(int I, int B, int Level, std::map<std::string, int> &Levels, Piece &P);
  void addUnassigned(Piece &P) const;
  Error wire();
  Error checkBlockOutputs(const Piece &P) const;
  std::string deviceOf(const Piece &P, int Shard, int Replica) const {
    const PiperGraphStage &St = Plan.stages[P.stage];
    return "acc" + std::to_string(St.firstDevice + Replica * St.tensorParallel + Shard);
  }
  std::string nameOf(const Piece &P, int Shard) const {
    if (P.numbered)
      return "stage" + std::to_string(P.stage) + "_" + P.part + std::to_string(P.index) +
             (P.degree > 1 ? "_tp" + std::to_string(Shard) : "") + "_" + deviceOf(P, Shard, 0);
    if (!P.part.empty())
      return "stage" + std::to_string(P.stage) + "_" + P.part + "_" + deviceOf(P, Shard, 0);
    return "stage" + std::to_string(P.stage) + "_piece" + std::to_string(P.index) +
           (P.degree > 1 ? "_tp" + std::to_string(Shard) : "") + "_" + deviceOf(P, Shard, 0);
  }
  json stageJson(const Piece &P, int Shard, json &Groups) const;
  json pipelineJson(const PiperGraphOptions &PO) const;
  json tensorParallelJson(json Reduces) const;
};

/// Backward marks the backward and optimizer nodes; every node reading
/// what one of them makes runs in the backward too (ORT's AccumulateGrad
/// Sum of partial gradients is a forward-side cost node by its name).
std::vector<char> afterBackward(const onnx::GraphProto &Graph, std::vector<char> Backward) {
  std::set<std::string> Made;
  for (bool Changed = true; Changed;) { // one pass on a sorted graph, a few otherwise
    Changed = false;
    for (int I = 0; I < Graph.node_size(); ++I) {
      const onnx::NodeProto &N = Graph.node(I);
      if (!Backward[I])
        for (const std::string &T : N.input()) Backward[I] |= Made.count(T) > 0;
      if (Backward[I])
        for (const std::string &O : N.output()) Changed |= Made.insert(O).second;
    }
  }
  return Backward;
}

Error StageWriter::assignNodes() {
  const onnx::GraphProto &Input = M.graph();
  std::vector<char> Forward(Input.node_size(), 0);
  for (int V = 0; V < static_cast<int>(G.numNodes()); ++V)
    if (!G.node(V).isBackward() && G.node(V).role != Role::Optimizer)
      for (int I : G.node(V).onnxNodes) Forward[I] = 1;
  for (int V = 0; V < static_cast<int>(G.numNodes()) && !Training; ++V)
    for (int I : G.node(V).onnxNodes) Training |= !Forward[I];
  for (size_t S = 0; S < Plan.stages.size() && Training; ++S)
    if (Plan.stages[S].tensorParallel > 1 && Plan.stages[S].dataParallel > 1)
      return makeUsageError("--algo piper --emit-stages: stage ", S, " is tensor-parallel (TP ",
                            Plan.stages[S].tensorParallel, ") and data-parallel (DP ",
                            Plan.stages[S].dataParallel,
                            ") on a training graph; the replicas of its shards are not written yet");
  NodeStage.assign(Input.node_size(), -1);
  for (size_t S = 0; S < Plan.stages.size(); ++S)
    for (int L : Plan.stages[S].layers)
      for (int V : Run.layers[L].nodes)
        for (int I : G.node(V).onnxNodes)
          if (Forward[I] || Training) NodeStage[I] = static_cast<int>(S);
  Written = M.proto;
  BackwardNode.assign(Input.node_size(), 0);
  for (int I = 0; I < Input.node_size(); ++I) BackwardNode[I] = !Forward[I];
  if (Training) {
    BackwardNode = afterBackward(Input, std::move(BackwardNode));
    ONNXP_RETURN_IF_ERROR(rewriteRecomputed());
  }
  for (const onnx::TensorProto &T : graph().initializer()) {
    if (T.data_location() == onnx::TensorProto::EXTERNAL)
      return makeUsageError("--algo piper --emit-stages: initializer '", T.name(),
                            "' has external data; its shards are not written yet");
    Initializers.insert(T.name());
  }
  for (int I = 0; I < graph().node_size(); ++I)
    for (const std::string &O : graph().node(I).output()) ProducerNode[O] = I;
  return Error::success();
}

/// A training graph: the plan's recomputed layers rewritten into the model
/// (PiperRecompute.h); each node of the rewritten model keeps its stage and
/// direction, found by its first output, and a recomputed copy runs in its
/// original's stage, in the backward.
Error StageWriter::rewriteRecomputed() {
  Expected<PiperRecompute> R = rewritePiperRecompute(G, M.proto, Run, Plan, BackwardNode);
  if (!R) return R.takeError();
  Recompute = std::move(*R);
  if (Recompute.rewrite.recomputedNodes == 0) return Error::success();
  std::map<std::string, int> ByOutput; // the input's first outputs -> node
  for (int I = 0; I < M.graph().node_size(); ++I)
    if (M.graph().node(I).output_size()) ByOutput[M.graph().node(I).output(0)] = I;
  Written = Recompute.model;
  std::vector<int> Stage(graph().node_size(), -1);
  std::vector<char> Backward(graph().node_size(), 1);
  for (int I = 0; I < graph().node_size(); ++I) {
    const onnx::NodeProto &N = graph().node(I);
    if (!N.output_size()) return makeInternalError("piper recompute: a node without outputs");
    auto Copy = Recompute.copyOf.find(N.output(0));
    auto It = ByOutput.find(Copy == Recompute.copyOf.end() ? N.output(0) : Copy->second);
    if (It == ByOutput.end())
      return makeInternalError("piper recompute: '", N.name(), "' stands for no node of the input");
    Stage[I] = NodeStage[It->second];
    Backward[I] = Copy != Recompute.copyOf.end() || BackwardNode[It->second];
  }
  NodeStage = std::move(Stage);
  BackwardNode = std::move(Backward);
  return Error::success();
}

std::vector<int> onnxNodesOf(const CostGraph &G, const std::vector<int> &Nodes) {
  std::vector<int> Out;
  for (int V : Nodes) Out.insert(Out.end(), G.node(V).onnxNodes.begin(), G.node(V).onnxNodes.end());
  std::sort(Out.begin(), Out.end());
  return Out;
}

/// A training graph (every stage at t = 1): per stage a forward piece and
/// a backward piece on its accelerators, forward pieces in stage order,
/// then the backward ones last stage first (a stage's backward reads the
/// next one's input gradient), as the runner orders a pipeline's F and B
/// stages (docs/output-format.md §3).
Error StageWriter::cutTraining() {
  const int Stages = static_cast<int>(Plan.stages.size());
  auto Add = [&](int S, bool Backward) {
    Piece P;
    P.stage = S;
    P.index = Backward ? 1 : 0;
    P.part = Backward ? "backward" : "forward";
    for (int I = 0; I < graph().node_size(); ++I)
      if (NodeStage[I] == S && (BackwardNode[I] != 0) == Backward) P.nodes.push_back(I);
    if (!P.nodes.empty()) Pieces.push_back(std::move(P));
  };
  for (int S = 0; S < Stages; ++S) {
    if (Plan.stages[S].tensorParallel < 2) {
      Add(S, false);
      continue;
    }
    for (char Recomputed : Plan.stages[S].recompute)
      if (Recomputed)
        return makeUsageError(
            "--algo piper --emit-stages: stage ", S, " is tensor-parallel (TP ",
            Plan.stages[S].tensorParallel,
            ") and recomputes a layer; a recomputed tensor-parallel block is not written yet");
    const size_t First = Blocks.size();
    ONNXP_RETURN_IF_ERROR(cutStage(S));
    for (size_t B = First; B < Blocks.size(); ++B) ONNXP_RETURN_IF_ERROR(markBlock(static_cast<int>(B)));
  }
  for (int S = Stages - 1; S >= 0; --S) {
    if (Plan.stages[S].tensorParallel < 2) Add(S, true);
    else ONNXP_RETURN_IF_ERROR(cutBackward(S));
  }
  return Error::success();
}

/// A training graph's block B: what each shard holds its own of in the
/// forward (the split nodes' outputs but the row's partial sum) and the
/// parameters the runner slices for it (graph inputs, parameterAxes).
Error StageWriter::markBlock(int B) {
  for (int I : Blocks[B].sharded)
    if (I != Blocks[B].row)
      for (const std::string &O : graph().node(I).output()) PerShard[O] = B;
  Expected<std::map<std::string, int>> Axes = parameterAxes(graph(), Blocks[B]);
  if (!Axes) return Axes.takeError();
  for (const auto &[Name, Axis] : *Axes) {
    PerShard[Name] = B;
    SlicedAxes[Name] = Axis;
  }
  return Error::success();
}

/// The block backward node I of stage S is split with: the one whose
/// shard tensors it reads (-1: none).
Expected<int> StageWriter::backwardBlock(int I, int S) const {
  int Block = -1;
  for (const std::string &T : graph().node(I).input()) {
    auto It = PerShard.find(T);
    if (It == PerShard.end() || It->second == Block) continue;
    if (Block >= 0)
      return makeUsageError("--algo piper --emit-stages: '", graph().node(I).name(), "' of stage ", S,
                            " reads the shards of two tensor-parallel blocks; it is not written yet");
    Block = It->second;
  }
  return Block;
}

/// Backward node I, split with block B at all-reduce level Level: a
/// column layer's input gradient is a partial sum (Megatron-LM §3: the f
/// operator's backward is an all-reduce), an accumulator sums into the
/// sliced buffer of its parameter, every other output is the shard's own.
Error StageWriter::noteShardedBackward(int I, int B, int Level, std::map<std::string, int> &Levels,
                                       Piece &P) {
  const onnx::NodeProto &N = graph().node(I);
  static const std::set<std::string> Shapes = {"Reshape", "Split",           "Expand",
                                               "Tile",    "ConstantOfShape", "Concat"};
  if (Shapes.count(N.op_type()))
    return makeUsageError(
        "--algo piper --emit-stages: ", N.op_type(), " '", N.name(),
        "' in the backward of a tensor-parallel block; its shard's shapes are not written yet");
  if (N.op_type() == "InPlaceAccumulatorV2" && N.domain() == "com.microsoft" && N.input_size() >= 2) {
    // ORT names a parameter W's buffer "W_grad.accumulation.buffer".
    const std::string &Buffer = N.input(0);
    auto It = std::find_if(SlicedAxes.begin(), SlicedAxes.end(), [&](const auto &A) {
      return PerShard.at(A.first) == B && Buffer == A.first + "_grad.accumulation.buffer";
    });
    if (It == SlicedAxes.end())
      return makeUsageError("--algo piper --emit-stages: accumulator '", N.name(),
                            "' sums a shard's gradient into '", Buffer,
                            "', the buffer of no sliced parameter");
    PerShard[Buffer] = B;
    SlicedAxes[Buffer] = It->second;
    Gathered.emplace_back(Buffer, B);
    for (const std::string &O : N.output()) Levels[O] = Level + 1; // a whole flag: shard 0's
    return Error::success();
  }
  std::set<std::string> InputGrads;
  for (int C : Blocks[B].column) InputGrads.insert(graph().node(C).input(0) + "_grad");
  for (const std::string &O : N.output()) {
    if (InputGrads.count(O)) {
      P.partials.push_back(O);
      Levels[O] = Level + 1;
    } else {
      PerShard[O] = B;
      Levels[O] = Level;
    }
  }
  return Error::success();
}

/// A tensor-parallel stage's backward: the nodes split with a block (they
/// read its shards) in one piece per block, once per shard, the rest
/// whole; a piece's level counts the all-reduces before it, so that the
/// pieces reading an all-reduced gradient come after the shards making it.
Error StageWriter::cutBackward(int S) {
  std::map<std::string, int> Levels;
  std::map<std::pair<int, int>, Piece> Cut; // (level, block) -> piece
  for (int I = 0; I < graph().node_size(); ++I) {
    if (NodeStage[I] != S || !BackwardNode[I]) continue;
    Expected<int> B = backwardBlock(I, S);
    if (!B) return B.takeError();
    int Level = 0;
    for (const std::string &T : graph().node(I).input()) {
      auto It = Levels.find(T);
      if (It != Levels.end()) Level = std::max(Level, It->second);
    }
    Piece &P = Cut[{Level, *B}];
    P.nodes.push_back(I);
    if (*B >= 0) ONNXP_RETURN_IF_ERROR(noteShardedBackward(I, *B, Level, Levels, P));
    else
      for (const std::string &O : graph().node(I).output()) Levels[O] = Level;
  }
  int Index = 0;
  for (auto &[Key, P] : Cut) {
    P.stage = S;
    P.index = Index++;
    P.part = "backward";
    P.numbered = true;
    P.block = Key.second;
    P.degree = Key.second >= 0 ? Plan.stages[S].tensorParallel : 1;
    Pieces.push_back(std::move(P));
  }
  return Error::success();
}

/// Stage S's nodes in graph order, cut after each block's row projection
/// when its t > 1 (the all-reduce of Megatron-LM §3's f/g pair).
Error StageWriter::cutStage(int S) {
  const PiperGraphStage &St = Plan.stages[S];
  std::vector<int> Rows; // the stage's blocks, by row node
  if (St.tensorParallel > 1)
    for (int L : St.layers)
      for (const MegatronBlock &B : Run.layers[L].blocks) {
        ShardBlock SB;
        for (int C : B.column) SB.column.push_back(G.node(C).onnxNodes.front());
        SB.row = G.node(B.row).onnxNodes.front();
        SB.heads = B.heads;
        SB.sharded = onnxNodesOf(G, B.sharded);
        Blocks.push_back(std::move(SB));
        BlockStage.push_back(S);
        Rows.push_back(static_cast<int>(Blocks.size()) - 1);
      }
  std::sort(Rows.begin(), Rows.end(), [&](int A, int B) { return Blocks[A].row < Blocks[B].row; });
  size_t Next = 0; // the block the current piece ends with
  auto NewPiece = [&]() {
    Piece P;
    P.stage = S;
    P.index = static_cast<int>(
        std::count_if(Pieces.begin(), Pieces.end(), [&](const Piece &Q) { return Q.stage == S; }));
    P.block = Next < Rows.size() ? Rows[Next] : -1;
    P.degree = P.block >= 0 ? St.tensorParallel : 1;
    if (P.block >= 0) P.partials = {graph().node(Blocks[P.block].row).output(0)};
    if (Training) {
      P.part = "forward";
      P.numbered = true;
    }
    Pieces.push_back(P);
  };
  NewPiece();
  for (int I = 0; I < graph().node_size(); ++I) {
    if (NodeStage[I] != S || (Training && BackwardNode[I])) continue;
    Pieces.back().nodes.push_back(I);
    if (Next < Rows.size() && I == Blocks[Rows[Next]].row) {
      ++Next;
      NewPiece();
    }
  }
  if (Pieces.back().nodes.empty()) Pieces.pop_back();
  for (const Piece &P : Pieces) {
    if (P.stage != S || P.block < 0) continue;
    for (int I : Blocks[P.block].sharded)
      if (!std::binary_search(P.nodes.begin(), P.nodes.end(), I))
        return makeUsageError("--algo piper --emit-stages: '", graph().node(I).name(),
                              "' of a tensor-parallel block lies outside the run between its all-reduces "
                              "(interleaved blocks are not written yet)");
  }
  return Error::success();
}

/// Nodes in no layer (constants folded out of the cost graph) are copied
/// into every piece reading their outputs.
void StageWriter::addUnassigned(Piece &P) const {
  std::set<int> In(P.nodes.begin(), P.nodes.end());
  std::vector<int> Work(P.nodes.begin(), P.nodes.end());
  while (!Work.empty()) {
    const int I = Work.back();
    Work.pop_back();
    for (const std::string &T : graph().node(I).input()) {
      auto It = ProducerNode.find(T);
      if (It == ProducerNode.end() || NodeStage[It->second] >= 0 || !In.insert(It->second).second) continue;
      Work.push_back(It->second);
    }
  }
  P.nodes.assign(In.begin(), In.end());
}

Error StageWriter::checkBlockOutputs(const Piece &P) const {
  if (P.block < 0) return Error::success();
  const ShardBlock &B = Blocks[P.block];
  std::set<std::string> Split;
  for (int I : B.sharded)
    if (I != B.row)
      for (const std::string &O : graph().node(I).output()) Split.insert(O);
  std::set<int> Sharded(B.sharded.begin(), B.sharded.end());
  for (const std::string &O : P.outputs)
    if (Split.count(O) && !PerShard.count(O))
      return makeUsageError(
          "--algo piper --emit-stages: '", O,
          "' inside a tensor-parallel block is read outside it; its shards are not written yet");
  if (P.part == "backward") return Error::success(); // every node of it is split (cutBackward)
  for (int I : P.nodes)
    for (const std::string &T : graph().node(I).input())
      // A Shape of a shard's tensor is computed in each shard (an export's
      // shape arithmetic); its values leave the piece from shard 0, so they
      // must not depend on the split axis (batch and sequence do not).
      if (!Sharded.count(I) && Split.count(T) && graph().node(I).op_type() != "Shape")
        return makeUsageError("--algo piper --emit-stages: '", graph().node(I).name(), "' reads '", T,
                              "' of a tensor-parallel block without being split with it");
  return Error::success();
}

Error StageWriter::wire() {
  std::set<std::string> GraphInputs;
  for (const onnx::ValueInfoProto &V : graph().input()) GraphInputs.insert(V.name());
  for (size_t P = 0; P < Pieces.size(); ++P)
    for (int I : Pieces[P].nodes)
      if (NodeStage[I] >= 0)
        for (const std::string &O : graph().node(I).output()) Producer[O] = static_cast<int>(P);
  std::set<std::string> Wanted;
  for (const onnx::ValueInfoProto &V : graph().output()) Wanted.insert(V.name());
  for (Piece &P : Pieces) {
    std::set<std::string> Made, Seen;
    for (int I : P.nodes)
      for (const std::string &O : graph().node(I).output()) Made.insert(O);
    for (int I : P.nodes)
      for (const std::string &T : graph().node(I).input()) {
        if (T.empty() || Made.count(T) || Initializers.count(T) || !Seen.insert(T).second) continue;
        if (!GraphInputs.count(T) && !Producer.count(T))
          return makeInternalError("piper stages: '", T, "' is made by no stage");
        auto Own = PerShard.find(T);
        if (Own != PerShard.end() && P.block != Own->second)
          return makeUsageError("--algo piper --emit-stages: '", T,
                                "', a shard's own tensor of a tensor-parallel block, is "
                                "read outside the block's shards");
        P.inputs.push_back(T);
        Wanted.insert(T);
      }
  }
  int Id = 0;
  for (size_t P = 0; P < Pieces.size(); ++P) {
    Piece &Pc = Pieces[P];
    Pc.firstId = Id;
    Id += Pc.degree;
    for (int I : Pc.nodes)
      if (NodeStage[I] >= 0)
        for (const std::string &O : graph().node(I).output())
          if (Wanted.count(O) && Producer[O] == static_cast<int>(P)) Pc.outputs.push_back(O);
    ONNXP_RETURN_IF_ERROR(checkBlockOutputs(Pc));
  }
  return Error::success();
}

json StageWriter::stageJson(const Piece &P, int Shard, json &Groups) const {
  const PiperGraphStage &St = Plan.stages[P.stage];
  json Inputs = json::array(), Outputs = json::array();
  for (const std::string &T : P.inputs) {
    // A shard's own tensor comes from the same shard of its maker.
    const bool Own = PerShard.count(T) > 0;
    auto It = Producer.find(T);
    Inputs.push_back(
        {{"tensor", Own ? shardName(T, Shard, P.degree) : T},
         {"from", It == Producer.end() ? json("graph") : json(Pieces[It->second].firstId + Own * Shard)}});
  }
  std::set<std::string> GraphOutputs;
  for (const onnx::ValueInfoProto &V : graph().output()) GraphOutputs.insert(V.name());
  for (const std::string &T : P.outputs) {
    if (Shard > 0 && !isOwn(P, T)) continue; // shard 0 provides what every shard computes whole
    const bool Own = PerShard.count(T) > 0;
    json To = json::array();
    for (const Piece &Q : Pieces)
      if (std::count(Q.inputs.begin(), Q.inputs.end(), T))
        for (int K = 0; K < Q.degree; ++K)
          if (!Own || K == Shard) To.push_back(Q.firstId + K);
    Outputs.push_back({{"tensor", Own           ? shardName(T, Shard, P.degree)
                                  : isOwn(P, T) ? partialName(T, Shard)
                                                : T},
                       {"to", To},
                       {"graph_output", GraphOutputs.count(T) > 0}});
  }
  const int Dev = St.firstDevice + Shard;
  json J = {{"id", P.firstId + Shard},
            {"name", nameOf(P, Shard)},
            {"file", nameOf(P, Shard) + ".onnx"},
            {"device", deviceOf(P, Shard, 0)},
            {"device_id", Dev},
            {"inputs", Inputs},
            {"outputs", Outputs},
            {"plan_stage", P.stage}};
  if (P.degree > 1) J["tensor_parallel"] = {{"shard", Shard}, {"degree", P.degree}};
  if (St.dataParallel > 1) {
    json Devices = json::array(), Ids = json::array();
    for (int R = 0; R < St.dataParallel; ++R) {
      Devices.push_back(deviceOf(P, Shard, R));
      Ids.push_back(Dev + R * St.tensorParallel);
    }
    auto It =
        std::find_if(Groups.begin(), Groups.end(), [&](const json &Gr) { return Gr["devices"] == Devices; });
    if (It == Groups.end()) {
      Groups.push_back({{"id", Groups.size()}, {"devices", Devices}});
      It = Groups.end() - 1;
    }
    J["replica_devices"] = Devices;
    J["replica_device_ids"] = Ids;
    J["allreduce_group"] = (*It)["id"];
    // A training piece's accumulated gradients, summed over the replicas
    // (docs/output-format.md, "reduced_gradients").
    if (Training) {
      json Reduced = json::array();
      for (int I : P.nodes) {
        const onnx::NodeProto &N = graph().node(I);
        if (N.op_type() == "InPlaceAccumulatorV2" && N.domain() == "com.microsoft" && N.input_size() >= 2)
          Reduced.push_back({{"gradient", N.input(1)}, {"accumulation_buffer", N.input(0)}});
      }
      J["reduced_gradients"] = Reduced;
    }
  }
  return J;
}

/// pipeline.json's "tensor_parallel": the all-reduces; on a training graph
/// the parameters (and gradient buffers) each shard reads a slice of, and
/// the buffers whose shards are concatenated into the original's
/// (docs/output-format.md §4c).
json StageWriter::tensorParallelJson(json Reduces) const {
  json J = {{"all_reduces", std::move(Reduces)}};
  if (SlicedAxes.empty()) return J;
  json Sliced = json::array(), Gather = json::array();
  for (const auto &[Name, Axis] : SlicedAxes) {
    const int Degree = Plan.stages[BlockStage[PerShard.at(Name)]].tensorParallel;
    for (int K = 0; K < Degree; ++K)
      Sliced.push_back({{"tensor", shardName(Name, K, Degree)},
                        {"of", Name},
                        {"axis", Axis},
                        {"shard", K},
                        {"degree", Degree}});
  }
  for (const auto &[Buffer, Block] : Gathered) {
    const int Degree = Plan.stages[BlockStage[Block]].tensorParallel;
    json Shards = json::array();
    for (int K = 0; K < Degree; ++K) Shards.push_back(shardName(Buffer, K, Degree));
    Gather.push_back({{"accumulation_buffer", Buffer}, {"shards", Shards}, {"axis", SlicedAxes.at(Buffer)}});
  }
  J["sliced_inputs"] = Sliced;
  J["gathered_gradients"] = Gather;
  return J;
}

json StageWriter::pipelineJson(const PiperGraphOptions &PO) const {
  json Stages = json::array(), Groups = json::array(), Reduces = json::array(), Devices = json::array();
  std::set<std::string> Used;
  for (const Piece &P : Pieces)
    for (int K = 0; K < P.degree; ++K) {
      Stages.push_back(stageJson(P, K, Groups));
      for (int R = 0; R < Plan.stages[P.stage].dataParallel; ++R) Used.insert(deviceOf(P, K, R));
    }
  for (const Piece &P : Pieces) {
    if (P.degree < 2) continue;
    for (const std::string &Row : P.partials) {
      json Partials = json::array(), Shards = json::array();
      for (int K = 0; K < P.degree; ++K) {
        Partials.push_back(partialName(Row, K));
        Shards.push_back(P.firstId + K);
      }
      Reduces.push_back({{"tensor", Row}, {"op", "sum"}, {"partials", Partials}, {"shards", Shards}});
    }
  }
  for (int D = 0; D < 4096; ++D)
    if (Used.count("acc" + std::to_string(D))) Devices.push_back("acc" + std::to_string(D));
  json Inputs = json::array(), Outputs = json::array();
  for (const onnx::ValueInfoProto &V : graph().input()) {
    if (Initializers.count(V.name())) continue;
    json Shape = json::array();
    for (const auto &D : V.type().tensor_type().shape().dim())
      Shape.push_back(D.has_dim_value() ? json(D.dim_value()) : json(D.dim_param()));
    Inputs.push_back(
        {{"name", V.name()}, {"elem_type", V.type().tensor_type().elem_type()}, {"shape", Shape}});
  }
  for (const onnx::ValueInfoProto &V : graph().output()) {
    auto It = Producer.find(V.name());
    Outputs.push_back({{"name", V.name()},
                       {"from", It == Producer.end() ? json("graph") : json(Pieces[It->second].firstId)}});
  }
  json J = {
      {"format", "onnx-partition.pipeline/1"},
      {"devices", Devices},
      {"graph_inputs", Inputs},
      {"graph_outputs", Outputs},
      {"stages", Stages},
      {"tensor_parallel", tensorParallelJson(Reduces)},
      {"plan",
       {{"algorithm", "piper"},
        {"objective", Plan.price.iterationMs},
        {"objective_kind", "iteration"},
        {"time_unit", "ms"},
        {"layout", Plan.layout()}}},
      {"pipeline", {{"microbatches", PO.microbatches}, {"schedule", pipelineScheduleName(PO.schedule)}}}};
  if (!Groups.empty()) J["allreduce_groups"] = Groups;
  // The --dim bindings, for the runner's symbolic input dims.
  for (const auto &[Name, V] : M.dimBindings) J["dims"][Name] = V;
  return J;
}

/// Name -> type of every tensor ONNX shape inference types in M (with the
/// stage writer's guards, Transforms/ExtractStages); the import's own
/// inference (contrib ops included) for the rest.
std::map<std::string, onnx::TypeProto> inferredTypes(const OnnxModel &M) {
  std::map<std::string, onnx::TypeProto> Types = inferStageTypes(M.proto);
  const onnx::GraphProto &G = M.proto.graph();
  for (const onnx::NodeProto &N : G.node())
    for (const std::string &O : N.output()) {
      const TensorInfo *T = M.tensor(O);
      if (Types.count(O) || !T || T->elemType == 0) continue;
      onnx::TypeProto TP;
      TP.mutable_tensor_type()->set_elem_type(T->elemType);
      for (size_t D = 0; T->hasShape && D < T->dims.size(); ++D) {
        auto *Dim = TP.mutable_tensor_type()->mutable_shape()->add_dim();
        if (T->dims[D] >= 0) Dim->set_dim_value(T->dims[D]);
        else if (D < T->symbols.size() && !T->symbols[D].empty()) Dim->set_dim_param(T->symbols[D]);
      }
      Types[O] = TP;
    }
  return Types;
}

Expected<int> StageWriter::write(const PiperGraphOptions &PO, const std::string &Dir, OutputTransaction &Tx) {
  ONNXP_RETURN_IF_ERROR(assignNodes());
  if (Training) ONNXP_RETURN_IF_ERROR(cutTraining());
  for (size_t S = 0; S < Plan.stages.size() && !Training; ++S)
    ONNXP_RETURN_IF_ERROR(cutStage(static_cast<int>(S)));
  for (Piece &P : Pieces) addUnassigned(P);
  ONNXP_RETURN_IF_ERROR(wire());
  std::map<std::string, onnx::TypeProto> Types = inferredTypes(M);
  // A recomputed tensor has its original's type.
  for (const auto &[Copy, Original] : Recompute.copyOf) {
    auto It = Types.find(Original);
    if (It != Types.end()) Types[Copy] = It->second;
  }
  std::vector<std::pair<std::string, std::string>> Files;
  int Count = 0;
  for (const Piece &P : Pieces)
    for (int K = 0; K < P.degree; ++K) {
      ShardRequest R;
      R.nodes = P.nodes;
      R.block = P.block >= 0 ? &Blocks[P.block] : nullptr;
      R.degree = P.degree;
      R.shard = K;
      R.inputs = P.inputs;
      for (const std::string &O : P.outputs)
        if (K == 0 || isOwn(P, O)) R.outputs.push_back(O);
      for (const auto &[T, B] : PerShard) R.perShard.insert(T);
      R.partials.insert(P.partials.begin(), P.partials.end());
      R.slicedAxes = SlicedAxes;
      Expected<onnx::ModelProto> Shard = shardModel(Written, R, Types);
      if (!Shard) return Shard.takeError();
      std::string Bytes;
      if (!Shard->SerializeToString(&Bytes)) return makeError("cannot serialize ", nameOf(P, K));
      Files.emplace_back((fs::path(Dir) / (nameOf(P, K) + ".onnx")).string(), std::move(Bytes));
      ++Count;
    }
  std::error_code EC;
  fs::create_directory(Dir, EC);
  if (EC) return makeError("--emit-stages: cannot create '", Dir, "': ", EC.message());
  for (auto &[Path, Bytes] : Files) ONNXP_RETURN_IF_ERROR(Tx.add(Path, Bytes));
  ONNXP_RETURN_IF_ERROR(Tx.add((fs::path(Dir) / "pipeline.json").string(), pipelineJson(PO).dump(2) + "\n"));
  Tx.replaceStagesIn(Dir);
  return Count;
}

/// Issue 34 item 3: the plan on the model, in IR 11's multi-device fields.
Expected<onnx::ModelProto> StageWriter::annotated() {
  ONNXP_RETURN_IF_ERROR(assignNodes());
  for (size_t S = 0; S < Plan.stages.size() && Training; ++S)
    if (Plan.stages[S].tensorParallel > 1)
      return makeUsageError(
          "--algo piper -o: stage ", S, " is tensor-parallel (TP ", Plan.stages[S].tensorParallel,
          ") on a training graph with backward nodes; the sharding specs of its backward are not "
          "written yet (--emit-stages writes its shards)");
  for (size_t S = 0; S < Plan.stages.size() && !Training; ++S)
    ONNXP_RETURN_IF_ERROR(cutStage(static_cast<int>(S)));
  std::vector<AnnotatedStage> Stages(Plan.stages.size());
  for (size_t S = 0; S < Plan.stages.size(); ++S) {
    const PiperGraphStage &St = Plan.stages[S];
    Stages[S].degree = St.tensorParallel;
    for (int R = 0; R < St.dataParallel; ++R)
      for (int K = 0; K < St.tensorParallel; ++K)
        Stages[S].devices.push_back("acc" + std::to_string(St.firstDevice + R * St.tensorParallel + K));
  }
  for (int I = 0; I < graph().node_size(); ++I)
    if (NodeStage[I] >= 0) Stages[NodeStage[I]].nodes.push_back(I);
  for (size_t B = 0; B < Blocks.size(); ++B) Stages[BlockStage[B]].blocks.push_back(Blocks[B]);
  onnx::ModelProto Out = Written; // recomputed layers rewritten on a training graph
  annotateShardingSpecs(Out, Stages);
  return Out;
}

} // namespace

Expected<onnx::ModelProto> onnxp::annotatePiperGraphModel(const CostGraph &G, const OnnxModel &M,
                                                          const PiperGraphRun &Run,
                                                          const PiperGraphPlan &Plan) {
  if (!Plan.ok()) return makeUsageError("-o: the piper plan is empty (", Plan.status, ")");
  StageWriter W(G, M, Run, Plan);
  return W.annotated();
}

Expected<int> onnxp::writePiperGraphStages(const CostGraph &G, const OnnxModel &M, const PiperGraphRun &Run,
                                           const PiperGraphPlan &Plan, const PiperGraphOptions &PO,
                                           const std::string &Dir, OutputTransaction &Tx) {
  if (!Plan.ok()) return makeUsageError("--emit-stages: the piper plan is empty (", Plan.status, ")");
  StageWriter W(G, M, Run, Plan);
  return W.write(PO, Dir, Tx);
}
