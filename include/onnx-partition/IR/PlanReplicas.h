//===- IR/PlanReplicas.h - Which accelerators run a device's replicas -*- C++ -*-===//
//
// Plan::replicas gives counts only (seed 004 App. C.2): device d runs its
// nodes as r data-parallel replicas, and the r - 1 accelerators it borrows
// hold no node and have 0. The writer (issue 33, item 5: pipeline.json's
// replica devices and all-reduce groups, the -o model's device sets) needs
// the accelerators themselves. Every planner that fills Plan::replicas
// (dp/dpl's IdealDP toPlan, PipeDream's replicated optimizer) lends the
// accelerators right after the one holding the nodes: d, d+1, ..., d+r-1.
// Accelerators are numbered node-major (Platform.h), so such a group stays
// inside one machine where it can and its all-reduce runs on the peer links.
// This file states that convention once and checks it, so a plan that
// breaks it is refused with a message instead of being written with the
// wrong devices.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IR_PLANREPLICAS_H
#define ONNXP_IR_PLANREPLICAS_H

#include "onnx-partition/IR/Plan.h"
#include "onnx-partition/Support/Error.h"

#include <string>
#include <vector>

namespace onnxp {

/// Per device of a platform of NumDevices: the devices running its
/// replicas, itself first, when Pl replicates it over two or more
/// accelerators; empty otherwise (no replicas, or a device lent to
/// another). Errors (naming devices by Name) when Pl.replicas does not
/// follow the convention above: a lent device is not the one right after
/// its host's group, or a device with 0 replicas is lent to nobody.
Expected<std::vector<std::vector<int>>> replicaGroups(const Plan &Pl, int NumDevices,
                                                      const std::vector<std::string> &Name);

/// Whether any device of Pl runs two or more replicas.
bool hasReplicas(const Plan &Pl);

} // namespace onnxp

#endif // ONNXP_IR_PLANREPLICAS_H
