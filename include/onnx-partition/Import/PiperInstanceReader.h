//===- Import/PiperInstanceReader.h - Piper's input, every TMPC --*- C++ -*-===//
//
// Reads a Piper planner input (msr-fiddle/piper's format, README "Input
// format") whole: every layer with every TMPC at every tensor-parallel
// degree, and the edges, for `--algo piper`. (PiperImporter.h keeps only
// TMPCs["1"] to make a chain for the chain planners.) Checked as Piper's
// checkInputCorrectness checks it; one error names the first problem.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_IMPORT_PIPERINSTANCEREADER_H
#define ONNXP_IMPORT_PIPERINSTANCEREADER_H

#include "onnx-partition/IR/PiperInstance.h"
#include "onnx-partition/Support/Error.h"

#include <string>

namespace onnxp {

/// Layers keep the file's order (node index = position in "nodes").
Expected<PiperInstance> parsePiperInstance(const std::string &Text, const std::string &Source);

/// Adds `Count` transformer layers as Piper's readBERTA100(32 + Count) does
/// (algo.cpp, Instance::insertTransformerLayer): a copy of the last
/// "ParallelTransformerLayer" (in topological order) that has one before and
/// one after it, spliced in after it, with only the chain edge in and out
/// (the copies are alike, so this is Piper's instance up to their order).
Error insertPiperTransformerLayers(PiperInstance &I, int Count);

} // namespace onnxp

#endif // ONNXP_IMPORT_PIPERINSTANCEREADER_H
