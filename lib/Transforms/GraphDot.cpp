//===- Transforms/GraphDot.cpp - A plan as a Graphviz picture -----------===//
//
// Graphviz draws clusters only around nodes declared inside them, so nodes
// are emitted cluster by cluster (stage order), then all edges. Names and
// labels are escaped for dot's quoted strings.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/GraphDot.h"

#include "onnx-partition/Coarsen/Contraction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

using namespace onnxp;

namespace {
/// Colours per device: accelerators from a qualitative palette, CPU cores
/// in greys, so the two kinds are told apart at a glance.
std::string deviceColor(const Platform &Pl, int D) {
  static const char *Acc[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                              "#b3de69", "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#a6cee3"};
  static const char *Cpu[] = {"#d9d9d9", "#bdbdbd", "#f0f0f0", "#969696"};
  if (Pl.isAccelerator(D)) return Acc[D % 12];
  return Cpu[(D - Pl.accelerators) % 4];
}

/// A darker shade of the same hue for cluster borders (pastels vanish on white).
std::string borderColor(const Platform &Pl, int D) {
  static const char *Acc[] = {"#1b9e77", "#b8a800", "#7570b3", "#d95f02", "#1f78b4", "#e6ab02",
                              "#66a61e", "#e7298a", "#6a3d9a", "#33a02c", "#b15928", "#1f5fa0"};
  if (Pl.isAccelerator(D)) return Acc[D % 12];
  return "#525252";
}

std::string quote(const std::string &S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\') Out += '\\';
    if (C == '\n') {
      Out += "\\n";
      continue;
    }
    Out += C;
  }
  return Out + "\"";
}

std::string ms(double V, const std::string &Unit) {
  char Buf[64];
  std::snprintf(Buf, sizeof Buf, "%.3g %s", V, Unit.c_str());
  return Buf;
}

/// The picture above a few hundred nodes: one box per (scope, side,
/// cluster), at the finest of layer and block scopes that gives at most
/// MaxBoxes boxes, else one box per cluster and side.
std::string groupedPlanToDot(const CostGraph &G, const Plan &P, const Platform &Pl, size_t MaxBoxes,
                             const std::vector<std::string> &StageNotes) {
  const std::string &Unit = G.timeUnit;
  const size_t N = G.numNodes();
  const bool HasStages = P.stage.size() == N;
  auto Device = [&](int V) { return V < static_cast<int>(P.device.size()) ? P.device[V] : -1; };
  auto Cluster = [&](int V) { return HasStages ? P.stage[V] : Device(V); };
  auto Time = [&](int V) { return Pl.isAccelerator(Device(V)) ? G.node(V).accTime : G.node(V).cpuTime; };

  // Boxes: key (scope, side, cluster) numbered in order of first node. The
  // scope is the contract pass's layer or block key of the node's name
  // (scopeKey; a backward node "<fw>_Grad" keeps its forward node's scope);
  // nodes without one (e.g. exported Constant_123) share one box per
  // cluster and side.
  std::vector<int> BoxOf(N);
  std::vector<int> First; // first node of each box
  std::vector<std::string> BoxName;
  std::string Level;
  auto Assign = [&](auto KeyOf) {
    std::map<std::tuple<std::string, bool, int>, int> Id;
    First.clear();
    BoxName.clear();
    for (size_t V = 0; V < N; ++V) {
      std::string Key = KeyOf(static_cast<int>(V));
      auto [It, New] = Id.try_emplace({Key, G.node(V).isBackward(), Cluster(V)}, static_cast<int>(Id.size()));
      if (New) {
        First.push_back(static_cast<int>(V));
        BoxName.push_back(Key);
      }
      BoxOf[V] = It->second;
    }
    return First.size();
  };
  // Models whose names are mostly unscoped (ONNX zoo exports such as
  // "resnetv17_conv3_fwd") would collapse into one box per stage: their
  // unscoped nodes go in runs of consecutive nodes instead, sized so that
  // about MaxBoxes / 2 runs remain.
  size_t Unscoped = 0;
  for (size_t V = 0; V < N; ++V) Unscoped += scopeKey(G.node(V).name, Granularity::Block).empty();
  const size_t Run = Unscoped > N / 2 ? std::max<size_t>(1, (2 * Unscoped + MaxBoxes - 1) / MaxBoxes) : 0;
  auto ScopeOf = [&](int V, Granularity Gr) {
    std::string Key = scopeKey(G.node(V).name, Gr);
    if (Key.empty() && Run) Key = "#" + std::to_string(V / Run);
    return Key;
  };
  bool Done = false;
  for (Granularity Gr : {Granularity::Layer, Granularity::Block})
    if (Assign([&](int V) { return ScopeOf(V, Gr); }) <= MaxBoxes) {
      Level = granularityName(Gr);
      Done = true;
      break;
    }
  if (!Done) {
    // One box per cluster and side: never more than twice the stages.
    Assign([](int) { return std::string(); });
    Level = "stage";
  }
  const int NumBoxes = static_cast<int>(First.size());
  std::vector<size_t> Count(NumBoxes, 0);
  std::vector<double> BoxTime(NumBoxes, 0);
  std::vector<char> AllBackward(NumBoxes, 1);
  for (size_t V = 0; V < N; ++V) {
    ++Count[BoxOf[V]];
    BoxTime[BoxOf[V]] += Time(V);
    AllBackward[BoxOf[V]] &= G.node(V).isBackward() ? 1 : 0;
  }

  std::ostringstream OS;
  OS << "digraph " << quote(G.sourceName.empty() ? "plan" : G.sourceName) << " {\n"
     << "  // onnx-partition --dot, grouped (" << N << " nodes in " << NumBoxes << " boxes by " << Level
     << "): one box per group and stage with its node count and time,\n"
     << "  // filled with its device's colour; dashed clusters are pipeline stages; red edges cross\n"
     << "  // devices, labelled with bytes. --dot-detail nodes draws every node.\n"
     << "  rankdir=TB;\n  newrank=true;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#999999\"];\n";
  std::ostringstream Title;
  Title << P.algorithm << ": " << objectiveName(P.objectiveKind) << " " << ms(P.objective, Unit) << " on "
        << Pl.accelerators << " accelerators + " << Pl.cpus << " CPU cores\n"
        << N << " nodes drawn as " << NumBoxes << " groups (" << Level << ")";
  OS << "  labelloc=t;\n  label=" << quote(Title.str()) << ";\n";
  std::map<int, std::vector<int>> Members; // cluster -> boxes
  for (int B = 0; B < NumBoxes; ++B) Members[Cluster(First[B])].push_back(B);
  for (auto &[C, Boxes] : Members) {
    int D = Device(First[Boxes.front()]);
    double Compute = 0;
    size_t Nodes = 0;
    for (int B : Boxes) {
      Compute += BoxTime[B];
      Nodes += Count[B];
    }
    std::string Dev = D >= 0 ? Pl.deviceName(D) : "unplaced";
    std::ostringstream L;
    if (HasStages) L << "stage " << C << " on " << Dev;
    else L << Dev;
    L << "\n" << Nodes << " nodes, " << ms(Compute, Unit);
    if (HasStages && C >= 0 && C < static_cast<int>(StageNotes.size()) && !StageNotes[C].empty())
      L << "\n" << StageNotes[C];
    OS << "  subgraph cluster_" << (C < 0 ? "none" : std::to_string(C)) << " {\n"
       << "    label=" << quote(L.str())
       << ";\n    style=dashed;\n    color=" << quote(D >= 0 ? borderColor(Pl, D) : "black")
       << ";\n    penwidth=2;\n";
    for (int B : Boxes) {
      std::string Name = BoxName[B];
      if (Name.empty() || Name[0] == '#') // unscoped: its first node names it
        Name = Count[B] == 1  ? G.node(First[B]).name
               : Name.empty() ? "(unscoped)"
                              : G.node(First[B]).name + " ...";
      if (AllBackward[B]) Name += " (backward)";
      std::ostringstream BL;
      BL << Name << "\n" << Count[B] << (Count[B] == 1 ? " node, " : " nodes, ") << ms(BoxTime[B], Unit);
      int BD = Device(First[B]);
      OS << "    b" << B << " [label=" << quote(BL.str())
         << ", fillcolor=" << quote(BD >= 0 ? deviceColor(Pl, BD) : "white");
      if (AllBackward[B]) OS << ", shape=ellipse";
      OS << "];\n";
    }
    OS << "  }\n";
  }
  std::map<std::pair<int, int>, double> Merged;
  for (const CostEdge &E : G.edges())
    if (BoxOf[E.src] != BoxOf[E.dst]) Merged[{BoxOf[E.src], BoxOf[E.dst]}] += E.bytes;
  for (auto &[Ends, Bytes] : Merged) {
    auto [S, T] = Ends;
    OS << "  b" << S << " -> b" << T;
    if (Device(First[S]) != Device(First[T]))
      OS << " [color=\"#d62728\", penwidth=2.5, fontcolor=\"#d62728\", label=" << quote(humanBytes(Bytes))
         << "]";
    OS << ";\n";
  }
  OS << "}\n";
  return OS.str();
}
} // namespace

Expected<DotDetail> onnxp::parseDotDetail(const std::string &Name) {
  if (Name == "auto") return DotDetail::Auto;
  if (Name == "groups") return DotDetail::Groups;
  if (Name == "nodes") return DotDetail::Nodes;
  return makeUsageError("--dot-detail '", Name, "' must be auto, groups or nodes");
}

std::string onnxp::planToDot(const CostGraph &G, const Plan &P, const Platform &Pl, const DotOptions &O) {
  if (O.detail == DotDetail::Groups || (O.detail == DotDetail::Auto && G.numNodes() > O.maxBoxes))
    return groupedPlanToDot(G, P, Pl, O.maxBoxes, O.stageNotes);
  std::ostringstream OS;
  const std::string &Unit = G.timeUnit;
  bool HasStages = P.stage.size() == G.numNodes();
  auto Device = [&](int V) { return V < static_cast<int>(P.device.size()) ? P.device[V] : -1; };
  auto Cluster = [&](int V) { return HasStages ? P.stage[V] : Device(V); };

  // Clusters in order, with their device and compute time.
  std::map<int, std::vector<int>> Members;
  for (size_t V = 0; V < G.numNodes(); ++V) Members[Cluster(V)].push_back(V);
  OS << "digraph " << quote(G.sourceName.empty() ? "plan" : G.sourceName) << " {\n"
     << "  // onnx-partition --dot: one box per cost node, filled with its device's colour;\n"
     << "  // dashed clusters are pipeline stages; red edges cross devices, purple ones cross nodes "
        "(the network), labelled with bytes.\n"
     << "  rankdir=TB;\n  newrank=true;\n  compound=true;\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#777777\"];\n";
  std::ostringstream Title;
  Title << P.algorithm << ": " << objectiveName(P.objectiveKind) << " " << ms(P.objective, Unit) << " on "
        << Pl.accelerators << " accelerators + " << Pl.cpus << " CPU cores";
  OS << "  labelloc=t;\n  label=" << quote(Title.str()) << ";\n";
  for (auto &[C, Nodes] : Members) {
    int D = Device(Nodes.front());
    double Compute = 0;
    for (int V : Nodes) {
      const CostNode &N = G.node(V);
      Compute += Pl.isAccelerator(Device(V)) ? N.accTime : N.cpuTime;
    }
    std::string Dev = D >= 0 ? Pl.deviceName(D) : "unplaced";
    std::ostringstream L;
    if (HasStages) L << "stage " << C << " on " << Dev;
    else L << Dev;
    L << "\n" << Nodes.size() << " nodes, " << ms(Compute, Unit);
    if (HasStages && C >= 0 && C < static_cast<int>(O.stageNotes.size()) && !O.stageNotes[C].empty())
      L << "\n" << O.stageNotes[C];
    OS << "  subgraph cluster_" << (C < 0 ? "none" : std::to_string(C)) << " {\n"
       << "    label=" << quote(L.str())
       << ";\n    style=dashed;\n    color=" << quote(D >= 0 ? borderColor(Pl, D) : "black")
       << ";\n    penwidth=2;\n";
    for (int V : Nodes) {
      const CostNode &N = G.node(V);
      int ND = Device(V);
      double T = Pl.isAccelerator(ND) ? N.accTime : N.cpuTime;
      std::string Label = N.name + (N.op.empty() ? "" : "\n" + N.op) + "\n" + ms(T, Unit);
      OS << "    n" << V << " [label=" << quote(Label)
         << ", fillcolor=" << quote(ND >= 0 ? deviceColor(Pl, ND) : "white");
      if (N.isBackward()) OS << ", shape=ellipse";
      OS << "];\n";
    }
    OS << "  }\n";
  }
  // Edges; parallel edges between the same pair are merged with their bytes summed.
  std::map<std::pair<int, int>, double> Merged;
  for (const CostEdge &E : G.edges()) Merged[{E.src, E.dst}] += E.bytes;
  for (auto &[Ends, Bytes] : Merged) {
    auto [S, T] = Ends;
    OS << "  n" << S << " -> n" << T;
    // Issue 21: an edge between nodes of the machine crosses the network.
    if (Device(S) != Device(T) && Device(S) >= 0 && Device(T) >= 0 &&
        Pl.linkBetween(Device(S), Device(T)) == LinkKind::Network)
      OS << " [color=\"#9467bd\", penwidth=4, fontcolor=\"#9467bd\", label="
         << quote(humanBytes(Bytes) + " (network)") << "]";
    else if (Device(S) != Device(T))
      OS << " [color=\"#d62728\", penwidth=2.5, fontcolor=\"#d62728\", label=" << quote(humanBytes(Bytes))
         << "]";
    OS << ";\n";
  }
  // A legend: one swatch per used device.
  std::set<int> Used(P.device.begin(), P.device.end());
  OS << "  subgraph cluster_legend {\n    label=\"devices\";\n    style=solid;\n    color=\"#bbbbbb\";\n";
  std::string Chain;
  for (int D : Used) {
    if (D < 0) continue;
    OS << "    legend" << D << " [label=" << quote(Pl.deviceName(D))
       << ", fillcolor=" << quote(deviceColor(Pl, D)) << ", color=" << quote(borderColor(Pl, D)) << "];\n";
    Chain += (Chain.empty() ? "    " : " -> ") + ("legend" + std::to_string(D));
  }
  // Invisible edges keep the swatches in device order, side by side.
  if (Used.size() > 1) OS << Chain << " [style=invis];\n    rank=same;\n";
  OS << "  }\n}\n";
  return OS.str();
}
