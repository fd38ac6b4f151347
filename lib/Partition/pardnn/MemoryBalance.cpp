//===- Partition/pardnn/MemoryBalance.cpp - Memory heuristic II -----------===//
//
// Heuristic II of seed 003 §3.2.2 balances memory without emulating the
// scheduler, with two strategies:
//
// Critical-path chunking, run after slicing and before mapping: when the
// primaries' memory (sum of memBytes of their nodes) is highly imbalanced,
// the heaviest primary hands one contiguous chunk of its path to each primary
// lighter than the mean. The paper does not quantify "high imbalance"; here it
// is a heaviest primary above twice the mean, and each light primary receives
// a chunk of up to (mean - its memory) bytes taken from the end of the path,
// never taking the heaviest below the mean. Mapping then builds locality
// around the chunks.
//
// Residual balancing, Eq. (5), after mapping: with r_pe / n_pe the shares of
// all residual / normal memory on accelerator pe, the heuristic moves residual
// classes from the accelerator with the largest r_pe + n_pe to the one with
// the smallest until every pe has K/2 (r_pe + n_pe) >= 1 (i.e. at least the
// mean combined share 2/K) or no residual class can narrow the gap. Each move
// picks, on the fullest device, the residual class whose share is the largest
// not above half the gap (so the move never overshoots), else the smallest one
// below the gap; a class moves at most once, so this is O(V log V).
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/ScheduleEmulator.h"
#include "onnx-partition/Partition/pardnn/ParDNN.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace onnxp;
using namespace onnxp::pardnn;

size_t pardnn::chunkCriticalPath(const Context &C, Slicing &S) {
  const CostGraph &G = *C.graph;
  const int K = S.numPrimary;
  if (K < 2) return 0;
  std::vector<double> Mem(K, 0);
  for (int Pe = 0; Pe < K; ++Pe)
    for (int V : S.clusters[Pe]) Mem[Pe] += G.node(V).memBytes;
  const double Mean = std::accumulate(Mem.begin(), Mem.end(), 0.0) / K;
  int Heavy = static_cast<int>(std::max_element(Mem.begin(), Mem.end()) - Mem.begin());
  if (Mean <= 0 || Mem[Heavy] <= 2 * Mean) return 0;
  std::vector<int> Light;
  for (int Pe = 0; Pe < K; ++Pe)
    if (Pe != Heavy && Mem[Pe] < Mean) Light.push_back(Pe);
  std::stable_sort(Light.begin(), Light.end(), [&](int A, int B) { return Mem[A] < Mem[B]; });
  std::vector<int> &Path = S.clusters[Heavy];
  size_t Moved = 0;
  for (int Pe : Light) {
    double Want = std::min(Mean - Mem[Pe], Mem[Heavy] - Mean);
    if (Want <= 0) break;
    // One contiguous chunk from the end of the remaining path.
    size_t Cut = Path.size();
    double Got = 0;
    while (Cut > 1 && Got + G.node(Path[Cut - 1]).memBytes <= Want) Got += G.node(Path[--Cut]).memBytes;
    if (Cut == Path.size()) continue;
    std::vector<int> &Dst = S.clusters[Pe];
    for (size_t I = Cut; I < Path.size(); ++I) {
      S.clusterOf[Path[I]] = Pe;
      Dst.push_back(Path[I]);
    }
    Moved += Path.size() - Cut;
    Path.resize(Cut);
    Mem[Pe] += Got;
    Mem[Heavy] -= Got;
  }
  return Moved;
}

size_t pardnn::balanceResidualMemory(const Context &C, const Platform &P, std::vector<int> &Device) {
  const CostGraph &G = *C.graph;
  const int K = P.accelerators;
  if (K < 2) return 0;
  double ResTotal = 0, NorTotal = 0;
  std::vector<double> Res(K, 0), Nor(K, 0);
  for (size_t V = 0; V < G.numNodes(); ++V) {
    if (!P.isAccelerator(Device[V])) continue;
    double B = G.node(V).memBytes;
    if (isResidualNode(G.node(V))) {
      Res[Device[V]] += B;
      ResTotal += B;
    } else {
      Nor[Device[V]] += B;
      NorTotal += B;
    }
  }
  if (ResTotal <= 0) return 0;
  auto Share = [&](int D) { return Res[D] / ResTotal + (NorTotal > 0 ? Nor[D] / NorTotal : 0.0); };

  // Movable residual classes per device, keyed by the share they carry.
  std::vector<std::set<std::pair<double, int>>> Classes(K);
  std::vector<double> ClassRes(C.numClasses, 0), ClassNor(C.numClasses, 0);
  for (int Cl = 0; Cl < C.numClasses; ++Cl) {
    int D = Device[C.members[Cl].front()];
    bool Movable = P.isAccelerator(D);
    for (int M : C.members[Cl]) {
      if (Device[M] != D || !G.node(M).accSupported) Movable = false;
      (isResidualNode(G.node(M)) ? ClassRes[Cl] : ClassNor[Cl]) += G.node(M).memBytes;
    }
    if (Movable && ClassRes[Cl] > 0)
      Classes[D].insert({ClassRes[Cl] / ResTotal + (NorTotal > 0 ? ClassNor[Cl] / NorTotal : 0.0), Cl});
  }
  size_t Moved = 0;
  const double Target = 2.0 / K;
  std::vector<char> Exhausted(K, 0);
  while (true) {
    int Hi = -1, Lo = 0;
    for (int D = 0; D < K; ++D) {
      if (Share(D) < Share(Lo)) Lo = D;
      if (!Exhausted[D] && (Hi < 0 || Share(D) > Share(Hi))) Hi = D;
    }
    if (Hi < 0 || Share(Lo) >= Target * (1 - 1e-9)) break;
    double Gap = Share(Hi) - Share(Lo);
    auto &Set = Classes[Hi];
    // Relative tolerance: shares are ratios, an exact half must count.
    auto It = Set.upper_bound({Gap / 2 * (1 + 1e-9), C.numClasses});
    if (It != Set.begin()) --It;
    else if (It == Set.end() || It->first >= Gap) It = Set.end();
    if (It == Set.end() || It->first >= Gap || Gap <= 0) {
      Exhausted[Hi] = 1;
      continue;
    }
    int Cl = It->second;
    Set.erase(It);
    for (int M : C.members[Cl]) Device[M] = Lo;
    Res[Hi] -= ClassRes[Cl];
    Nor[Hi] -= ClassNor[Cl];
    Res[Lo] += ClassRes[Cl];
    Nor[Lo] += ClassNor[Cl];
    Moved += C.members[Cl].size();
  }
  return Moved;
}
