//===- Partition/piper/PiperBaseline.cpp - PipeDream-2BW-style equal split ===//
//
// Piper's baseline (paper §5, algo.cpp runPipeDream2BWPlanner and
// runPipeDream2BWPlannerNonTransformer), priced by pricePiperPlan: every
// (stage count, d, t, recomputation everywhere or nowhere) of the equal
// split, the best kept. A layer lacking the TMPC id the configuration asks
// for makes the configuration unavailable.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/eval/PiperEvaluator.h"
#include "onnx-partition/Partition/piper/PiperPlanner.h"

#include <algorithm>
#include <limits>

using namespace onnxp;

namespace {
const char *const kTransformer = "ParallelTransformerLayer";

/// The layers before the transformer layers and after them (Piper's loop:
/// a layer feeding an initial or transformer layer is initial, one fed by a
/// transformer or final layer is final).
void splitAround(const PiperInstance &I, const std::vector<int> &Transformers, std::vector<int> &Initial,
                 std::vector<int> &Final) {
  std::vector<char> Kind(I.layers.size(), 0); // 0 unknown, 1 initial, 2 transformer, 3 final
  for (int V : Transformers) Kind[V] = 2;
  for (bool Grew = true; Grew;) {
    Grew = false;
    for (const PiperEdge &E : I.edges) {
      if (Kind[E.from] == 0 && (Kind[E.to] == 1 || Kind[E.to] == 2)) {
        Kind[E.from] = 1;
        Initial.push_back(E.from);
        Grew = true;
      }
      if (Kind[E.to] == 0 && (Kind[E.from] == 2 || Kind[E.from] == 3)) {
        Kind[E.to] = 3;
        Final.push_back(E.to);
        Grew = true;
      }
    }
  }
}

/// Groups: the equal split of Middle over Parts stages, the last
/// Middle % Parts of them one longer (as Piper splits).
std::vector<std::vector<int>> equalSplit(const std::vector<int> &Middle, int Parts) {
  std::vector<std::vector<int>> Out(Parts);
  const int Per = static_cast<int>(Middle.size()) / Parts, Larger = static_cast<int>(Middle.size()) % Parts;
  size_t Next = 0;
  for (int P = 0; P < Parts; ++P)
    for (int Q = 0; Q < Per + (P >= Parts - Larger ? 1 : 0); ++Q) Out[P].push_back(Middle[Next++]);
  return Out;
}

/// The TMPC index with this id at t, or -1.
int tmpcIndex(const PiperLayer &L, int T, const std::string &Id) {
  auto It = L.tmpcs.find(T);
  if (It == L.tmpcs.end()) return -1;
  for (size_t Q = 0; Q < It->second.size(); ++Q)
    if (It->second[Q].id == Id) return static_cast<int>(Q);
  return -1;
}

struct Best {
  double value = std::numeric_limits<double>::infinity();
  PiperPlan plan;
};

/// Every d, t and recomputation choice of one split.
void tryDegrees(const PiperInstance &I, const std::vector<std::vector<int>> &Split, bool TensorParallel,
                Best &B) {
  const int Stages = static_cast<int>(Split.size());
  for (int D = 1; Stages * D <= std::min(I.maxDevices, I.mbsInBatch); ++D) {
    if (I.mbsInBatch % D != 0) continue;
    for (int T = 1; Stages * D * T <= I.maxDevices; ++T) {
      if (T > 1 && !TensorParallel) break;
      for (const char *Id : {"vanilla", "activation recomp"}) {
        PiperPlan P;
        bool Ok = true;
        for (const std::vector<int> &Layers : Split) {
          PiperStage St{Layers, D, T, {}};
          for (int V : Layers) {
            St.tmpc.push_back(tmpcIndex(I.layers[V], T, Id));
            Ok = Ok && St.tmpc.back() >= 0;
          }
          P.stages.push_back(std::move(St));
        }
        if (!Ok) continue;
        Expected<PiperPlanPrice> Price = pricePiperPlan(I, P);
        if (Price && Price->timePerSample < B.value) {
          B.value = Price->timePerSample;
          B.plan = std::move(P);
        }
      }
    }
  }
}
} // namespace

PiperPlan onnxp::piperEqualSplitBaseline(const PiperInstance &I, bool TensorParallel) {
  const std::vector<int> Order = piperTopologicalOrder(I);
  std::vector<int> Transformers;
  for (int V : Order)
    if (I.layers[V].name == kTransformer) Transformers.push_back(V);
  Best B;
  if (Transformers.empty()) {
    for (int Stages = 1; Stages <= std::min<int>(I.maxDevices, static_cast<int>(Order.size())); ++Stages)
      tryDegrees(I, equalSplit(Order, Stages), TensorParallel, B);
    return B.plan;
  }
  std::vector<int> Initial, Final;
  splitAround(I, Transformers, Initial, Final);
  if (Initial.size() + Final.size() + Transformers.size() != I.layers.size()) return {};
  const int NT = static_cast<int>(Transformers.size());
  for (int Separate = 0; Separate <= 1; ++Separate)
    for (int Stages = 1 + 2 * Separate; Stages <= I.maxDevices && Stages <= NT + 2 * Separate; ++Stages) {
      std::vector<std::vector<int>> Split = equalSplit(Transformers, Stages - 2 * Separate);
      if (Separate) {
        Split.insert(Split.begin(), std::vector<int>());
        Split.emplace_back();
      }
      Split.front().insert(Split.front().end(), Initial.begin(), Initial.end());
      Split.back().insert(Split.back().end(), Final.begin(), Final.end());
      tryDegrees(I, Split, TensorParallel, B);
    }
  return B.plan;
}
