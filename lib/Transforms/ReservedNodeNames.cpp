//===- Transforms/ReservedNodeNames.cpp - Names the write-back reserves --===//
#include "onnx-partition/Transforms/ReservedNodeNames.h"

#include "onnx-partition/Transforms/PlacementFields.h"

using namespace onnxp;

std::string onnxp::escapeReservedNodeNames(onnx::GraphProto &G) {
  int Renamed = 0;
  std::string First;
  for (onnx::NodeProto &N : *G.mutable_node()) {
    std::string Name = N.name();
    for (const char *Tag : {kRecomputeNameTag, kFoldedCopyTag, kSinkCopyTag}) {
      // Every occurrence: "/_" + the tag without its slash.
      const std::string From = Tag, To = std::string("/_") + (Tag + 1);
      for (size_t At = Name.find(From); At != std::string::npos; At = Name.find(From, At + To.size()))
        Name.replace(At, From.size(), To);
    }
    if (Name == N.name()) continue;
    if (Renamed++ == 0) First = "'" + N.name() + "' is now '" + Name + "'";
    N.set_name(Name);
  }
  if (!Renamed) return "";
  return "renamed " + std::to_string(Renamed) + " node" + (Renamed > 1 ? "s" : "") +
         " whose names hold a tag onnx-partition gives the nodes it inserts (" + First +
         (Renamed > 1 ? ", ..." : "") + ")";
}
