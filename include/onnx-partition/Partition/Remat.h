//===- Partition/Remat.h - Activation offloading + rematerialization -*- C++ -*-===//
//
// Seed 001 (Beaumont, Eyraud-Dubois, Shilova: activation offloading combined
// with rematerialization on chains, supplementary material): one accelerator
// of memory M, one host link of bandwidth beta, a chain of L layers. Each
// forward step runs as F_all (keep everything the backward needs), F_ck (keep
// the input only) or F_nograd (keep nothing); checkpoints kept by the forward
// phase may be offloaded to the host before the loss and prefetched after it.
// The dynamic program of the supplement (App. B) returns the fastest
// operation sequence for a memory discretized in slots.
//
// With offloading off (`offload = false`, the `--no-offload` flag) the problem
// is rotor's optimal persistent rematerialization (Beaumont et al., Inria
// RR-9302), which planRotor solves with rotor's own recurrence.
//
// Memory model (shared by the DPs, the simulator and the exhaustive search;
// rotor's conventions, reconstructed where the supplement's OCR is damaged):
//  - sizes are rounded up per tensor to whole slots; the budget counts a_0;
//  - F_all^k and F_ck^k read a^{k-1} and pin it until B^k; F_all^k writes the
//    stored state abar^k (which contains a^k), F_ck^k and F_nograd^k write a^k;
//    F_nograd^k frees its input unless it is pinned;
//  - B^k reads delta^k, abar^k and a^{k-1} and writes delta^{k-1} (the size
//    of a^{k-1}); at its end delta^k and abar^k are freed and a^{k-1} is
//    unpinned (freed unless it lives inside abar^{k-1});
//  - an operation's peak is the resident set plus its outputs plus its
//    transient overhead (seed 001's M^B_i = abar^i + delta^i + delta^{i-1} +
//    o_B^i beside the input, rotor's cw[i] + cw[i+1] + cbw[i+1] + btmp[i]);
//  - the loss is layer L+1 with nothing stored: it reads a^L, writes delta^L;
//  - the link moves data at beta; the memory of a tensor being offloaded is
//    released as it is copied and the memory of a tensor being prefetched is
//    taken as it arrives (the fluid model of Lemma 1's proof).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REMAT_H
#define ONNXP_PARTITION_REMAT_H

#include "onnx-partition/IR/Chain.h"
#include "onnx-partition/IR/ChainSchedules.h"
#include "onnx-partition/Support/Error.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace onnxp {

/// Seed 001's dynamic program (App. B). With Options.offload false it runs
/// the same recurrences with beta = 0 (no offloading, no idle time), which
/// is rotor's DP; planRotor computes that case with rotor's own table.
Expected<RematPlan> planOffloadRemat(const Chain &C, const RematOptions &Options);

/// Rotor's persistent rematerialization DP (RR-9302), offloading off.
Expected<RematPlan> planRotor(const Chain &C, const RematOptions &Options);

/// planRotor whose table also covers up to ExtraBytes more memory, in
/// slots of the same size: (*More)[e] is rotor's value with e more slots
/// (issue 38: offload-activations' link test). More is left empty when those
/// slots exceed the budget again or the table's size limit. The plan is
/// planRotor's (values at the budget do not depend on the table's extent).
Expected<RematPlan> planRotorWithMore(const Chain &C, const RematOptions &Options, double ExtraBytes,
                                      std::vector<double> *More);

/// The no-memory-limit makespan: every forward once, every backward once.
double rematLowerBoundMs(const Chain &C, const RematOptions &Options);

/// Human-readable per-layer report (variant, recomputations, offloads).
std::string formatRematReport(const Chain &C, const RematPlan &Plan);

} // namespace onnxp

#endif // ONNXP_PARTITION_REMAT_H
