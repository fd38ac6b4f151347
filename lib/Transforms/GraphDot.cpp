//===- Transforms/GraphDot.cpp - A plan as a Graphviz picture -----------===//
//
// Graphviz draws clusters only around nodes declared inside them, so nodes
// are emitted cluster by cluster (stage order), then all edges. Names and
// labels are escaped for dot's quoted strings.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Transforms/GraphDot.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

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
} // namespace

std::string onnxp::planToDot(const CostGraph &G, const Plan &P, const Platform &Pl) {
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
