//===- Partition/eval/IterationTrace.cpp - One iteration as a Chrome trace ===//
//
// See IterationTrace.h.
//
//===----------------------------------------------------------------------===//
#include "onnx-partition/Partition/IterationTrace.h"

#include "onnx-partition/Support/HumanUnits.h"

#include <algorithm>
#include <map>
#include <string>

using namespace onnxp;

ChromeTrace onnxp::traceIteration(const std::vector<IterationStage> &Stages, const Platform &P,
                                  const IterationRequest &R, const IterationPrice &Price,
                                  const std::vector<int> &Shards) {
  ChromeTrace T;
  const int M = R.microbatches;
  for (size_t S = 0; S < Stages.size(); ++S) {
    const IterationStage &St = Stages[S];
    const IterationStagePrice &SP = Price.stages[S];
    const int D = static_cast<int>(St.devices.size());
    const int Degree = S < Shards.size() ? std::max(1, Shards[S]) : 1;
    for (int Rep = 0; Rep < D; ++Rep)
      for (int K = 0; K < Degree; ++K) {
        const int Dev = St.devices[Rep] + K;
        T.nameProcess(
            Dev, P.deviceName(Dev) + ": stage " + std::to_string(S) + " replica " + std::to_string(Rep) +
                     (Degree > 1 ? " shard " + std::to_string(K) + " of " + std::to_string(Degree) : ""));
        T.nameThread(Dev, 0, "compute");
        if (R.training) T.nameThread(Dev, 1, "all-reduce");
        for (int Mb = Rep; Mb < M; Mb += D) {
          const std::map<std::string, std::string> Args = {{"stage", std::to_string(S)},
                                                           {"micro-batch", std::to_string(Mb)}};
          const double FEnd = Price.forwardEnd[S][Mb];
          T.addSlice(Dev, 0, "F" + std::to_string(Mb), "forward", FEnd - St.forwardMs, St.forwardMs, Args);
          if (!R.training) continue;
          const double BEnd = Price.backwardEnd[S][Mb];
          T.addSlice(Dev, 0, "B" + std::to_string(Mb), "backward", BEnd - St.backwardMs, St.backwardMs, Args);
        }
        if (!R.training) continue;
        if (SP.allReduceMs > 0)
          T.addSlice(Dev, 1, "all-reduce", "all-reduce", SP.lastBackwardEnd, SP.allReduceMs,
                     {{"bytes", humanBytes(St.gradientBytes)}, {"replicas", std::to_string(D)}});
        if (SP.optimizerMs > 0)
          T.addSlice(Dev, 0, "optimizer step", "optimizer", SP.lastBackwardEnd + SP.allReduceMs,
                     SP.optimizerMs, {{"bytes", humanBytes(St.optimizerBytes)}});
      }
  }
  return T;
}
