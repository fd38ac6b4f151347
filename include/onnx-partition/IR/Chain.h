//===- IR/Chain.h - A training graph as a chain of blocks -------*- C++ -*-===//
//
// The input of the chain planners (seed 000 pipelined training, seed 001
// activation offloading with rematerialization, seed 002 weight offloading).
// Block l = 1..L runs a forward step F_l (reads a_{l-1}, writes a_l) and a
// backward step B_l (reads the gradient of a_l, writes the gradient of
// a_{l-1}); the gradient of an activation has the activation's size.
//
// A chain comes from the `linearize` pass (seed 000 §5's greedy
// linearization of a cost graph), from a PipeDream profile, from the Piper
// planner input, or from a chain JSON file (`onnx-partition chain` writes
// one). Blocks remember which cost-graph nodes they merge, so a chain plan
// maps back to the original ONNX nodes.
//
// Units: times in milliseconds, sizes in bytes, as in CostGraph. Sizes are
// doubles (CostGraph's convention) but always whole numbers of bytes.
//
// Like CostGraph.h this header includes no ONNX: planners compile against it
// alone.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_CHAIN_H
#define ONNXP_IR_CHAIN_H

#include "onnx-partition/Support/Error.h"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace onnxp {

struct ChainBlock {
  std::string name;
  double forwardTime = 0;  ///< u_F: time of the forward step, ms
  double backwardTime = 0; ///< u_B: time of the backward step, ms
  double outputBytes = 0;  ///< a_l: the activation leaving the block
  /// Bytes the forward step keeps for the backward step when it keeps
  /// everything (seed 001's stored size, "F_all"); includes a_l. Importers
  /// that know nothing finer set it to outputBytes.
  double storedBytes = 0;
  double weightBytes = 0; ///< W_l: parameter bytes of the block
  /// Of weightBytes, the bytes that do not train (frozen parameters,
  /// non-weight constants: Analysis/Trainable.h): no gradient, no optimizer
  /// state. 0 (every weight trains) for chains that cannot tell.
  double frozenBytes = 0;
  double forwardOverhead = 0;  ///< transient bytes while F_l runs (workspace)
  double backwardOverhead = 0; ///< transient bytes while B_l runs
  /// Of backwardTime, the work that only feeds the block's parameter
  /// gradients (issue 35: W of the zero-bubble schedules, Analysis/
  /// BackwardSplit.h); the rest, backwardTime - backwardWeightTime, is B
  /// (the gradient of the block's input). 0 when the source cannot tell:
  /// the whole backward is then B.
  double backwardWeightTime = 0;
  /// Cost-graph node ids merged into this block (forward, backward and
  /// optimizer nodes alike); empty for chains read from profiles or JSON.
  std::vector<int> nodes;
  /// Names of the source layers (profile nodes, ONNX node names, ...).
  std::vector<std::string> sources;
};

/// Limits on a chain's numbers (issue 25, item 1): every value an importer
/// accepts must keep the planners' sums, products and quotients finite, so
/// `forwardTime: 1e308` is an import error naming the field, not an
/// infinite period (or a heap overflow) deep inside a planner. A million
/// blocks of 1e12 ms and 1e18 bytes still sum to well below DBL_MAX and
/// to below 2^53 times any planner's discretization.
constexpr double kMaxChainTimeMs = 1e12; ///< one task: about 31 years
constexpr double kMaxChainBytes = 1e18;  ///< one tensor or weight set: 1 EB
constexpr size_t kMaxChainBlocks = 1000000;

struct Chain {
  std::string name;       ///< for messages and reports
  std::string sourceName; ///< the file it came from
  double inputBytes = 0;  ///< a_0: the activation entering block 1
  std::vector<ChainBlock> blocks;
  /// When the blocks stand for a DAG (a PipeDream profile read with
  /// `--chain-recipe graph`, issue 33): block u feeds block v, u < v, each
  /// edge once. Empty: the blocks form a path (block l feeds l + 1). The
  /// chain planners of seed 000-002 read the chain order; PipeDream's
  /// replicated optimizer plans on the DAG's ideals.
  std::vector<std::pair<int, int>> edges;

  size_t size() const { return blocks.size(); }
  /// a_l for l = 0..L (a_0 = inputBytes).
  double activationBytes(size_t L) const { return L == 0 ? inputBytes : blocks[L - 1].outputBytes; }
  double totalForwardTime() const;
  double totalBackwardTime() const;
  double totalWeightBytes() const;

  /// Checks that every number is finite, non-negative and within the
  /// limits below, and that there are 1..kMaxChainBlocks blocks; the message
  /// names the block, the field and the limit.
  Error validate() const;

  /// Stable textual dump, one line per block (lit tests FileCheck it).
  void print(std::ostream &OS) const;
};

/// Checks that moving any one of the chain's tensors (an activation, a
/// block's stored bytes or its weights) over a link of Bandwidth bytes/s
/// takes at most kMaxChainTimeMs, so that the planners' transfer times stay
/// finite; Link names the platform field for the message (issue 25).
Error checkTransferTimes(const Chain &C, double BandwidthBytesPerSec, const std::string &Link);

} // namespace onnxp

#endif // ONNXP_IR_CHAIN_H
