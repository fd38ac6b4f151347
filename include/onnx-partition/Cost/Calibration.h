//===- Cost/Calibration.h - Fit a device's roofline to measured kernels -*- C++ -*-===//
//
// Issue 23, item 3: `onnx-partition calibrate` measures a model's kernels in
// ONNX Runtime and fits the profiled device kind to them. The fit is least
// squares on the log of predicted/measured time (a ratio error: a 5 us
// kernel weighs as much as a 50 ms one), first for the device's three
// roofline parameters (peak FLOP/s, bandwidth, per-kernel overhead), then,
// per op kind with enough samples, for that kind's achieved fraction of
// each peak and its own overhead (DeviceSpec::opKinds). Kept apart from the
// tool so a test can fit a synthetic profile with known efficiencies.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_COST_CALIBRATION_H
#define ONNXP_COST_CALIBRATION_H

#include "onnx-partition/Cost/OpWork.h"
#include "onnx-partition/IR/Platform.h"

#include <string>
#include <vector>

namespace onnxp {

/// One measured kernel: its op kind, analytical work and measured time.
struct CalibrationSample {
  std::string kind;
  OpWork work;
  double measuredMs = 0;
};

/// How well a device spec predicts the samples.
struct FitQuality {
  double rho = 0;    ///< Spearman's rank correlation, predicted vs measured
  double mape = 0;   ///< mean absolute percentage error, in percent
  double logSse = 0; ///< sum of squared log ratios (what the fit minimizes)
  /// |sum predicted - sum measured| / sum measured, in percent: how far a
  /// stage made of these kernels is priced off (issue 37).
  double totalError = 0;
};
FitQuality fitQuality(const std::vector<CalibrationSample> &S, const DeviceSpec &D);

struct CalibrationOptions {
  /// Fit per-op-kind efficiencies (else only the three device parameters).
  bool perKind = true;
  /// An op kind needs this many samples for its own three parameters; a
  /// rarer kind gets one efficiency (the same fraction of both peaks) and
  /// the device's overhead.
  int minKindSamples = 3;
};

/// A fitted parameter the search left at a limit (issue 37, item 7): the
/// fit wanted a rate above the platform's peak and was clamped at it, or
/// the best value is at the edge of the span the grid searched (453.158x
/// its start either way), where the optimum may lie beyond.
struct CalibrationLimit {
  enum Reason { AbovePeak, GridEdgeLow, GridEdgeHigh };
  std::string kind;      ///< op kind; empty for the device-wide fit
  std::string parameter; ///< "FLOP/s", "bandwidth", "overhead" or "efficiency"
  int samples = 0;       ///< profiled kernels the fit used
  Reason reason = AbovePeak;
};
/// At most two lines (no "note:"): the parameters clamped at the peak and
/// those at the grid's edge, each with its kind and kernel count.
std::vector<std::string> describeLimits(const std::vector<CalibrationLimit> &Limits);

/// Base with its peaks and overhead fitted to S and, with O.perKind, its
/// opKinds table replaced by one entry per kind S holds samples of.
/// Issue 37, item 7: no fitted rate, the device's or a kind's, exceeds
/// Base's peaks, and every efficiency is at most 1: the device's peaks are
/// the fastest rates its fits reached (the device-wide fit's, or a faster
/// kind's). Limits, when given, receives every parameter left at a limit.
DeviceSpec calibrateDevice(const std::vector<CalibrationSample> &S, const DeviceSpec &Base,
                           const CalibrationOptions &O = CalibrationOptions(),
                           std::vector<CalibrationLimit> *Limits = nullptr);

/// Issue 37, item 7: a fit judged on kernels it did not see. Every
/// kHeldOutEvery-th sample (in profile order) is held out, the rest fitted;
/// worse when the fit prices the held-out kernels both further off in
/// total (FitQuality::totalError: a stage's time is such a sum) and one by
/// one (MAPE) than the uncalibrated device does: the PaddleOCR classifier's
/// fit went from 129.6% to 381.8% MAPE and priced the model 20.2 ms against
/// 5.6-9.3 ms measured (5.55 ms before). One measure alone moves with the
/// noise of a short profile. heldOut is 0 (no verdict) below
/// kMinJudgedSamples samples.
constexpr int kHeldOutEvery = 4;
/// Profiles of fewer kernels get no verdict: under ten held-out kernels
/// (of an 18-node CNN measured once) the verdict followed the noise.
constexpr int kMinJudgedSamples = 10 * kHeldOutEvery;
struct HeldOutCheck {
  int heldOut = 0;
  FitQuality before, after;
  bool worse = false;
};
HeldOutCheck checkOnHeldOut(const std::vector<CalibrationSample> &S, const DeviceSpec &Base,
                            const CalibrationOptions &O = CalibrationOptions());

} // namespace onnxp

#endif // ONNXP_COST_CALIBRATION_H
