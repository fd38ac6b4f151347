//===- Partition/remat/FlatMemo.h - Open-addressing memo table --*- C++ -*-===//
//
// The offloading DP visits millions of states keyed by packed 64-bit
// integers; std::unordered_map's node per entry made the lookups the solve
// time. This table keeps keys and values in two flat arrays with linear
// probing and doubles at half load. Key ~0 is reserved as "empty".
//
//===----------------------------------------------------------------------===//
#ifndef ONNXP_PARTITION_REMAT_FLATMEMO_H
#define ONNXP_PARTITION_REMAT_FLATMEMO_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnxp::remat {

template <typename V> class FlatMemo {
public:
  FlatMemo() { rehash(1 << 12); }

  /// The value stored under Key, or null.
  const V *find(uint64_t Key) const {
    for (size_t I = slot(Key);; I = (I + 1) & Mask) {
      if (Keys[I] == Key) return &Vals[I];
      if (Keys[I] == Empty) return nullptr;
    }
  }

  void insert(uint64_t Key, const V &Val) {
    if (2 * (Count + 1) > Keys.size()) rehash(Keys.size() * 2);
    place(Key, Val);
  }

  size_t size() const { return Count; }

private:
  static constexpr uint64_t Empty = ~uint64_t(0);
  size_t slot(uint64_t Key) const {
    Key ^= Key >> 33;
    Key *= 0xff51afd7ed558ccdULL;
    Key ^= Key >> 33;
    return size_t(Key) & Mask;
  }
  void place(uint64_t Key, const V &Val) {
    size_t I = slot(Key);
    while (Keys[I] != Empty && Keys[I] != Key) I = (I + 1) & Mask;
    if (Keys[I] == Empty) ++Count;
    Keys[I] = Key;
    Vals[I] = Val;
  }
  void rehash(size_t N) {
    std::vector<uint64_t> OldK = std::move(Keys);
    std::vector<V> OldV = std::move(Vals);
    Keys.assign(N, Empty);
    Vals.assign(N, V());
    Mask = N - 1;
    Count = 0;
    for (size_t I = 0; I < OldK.size(); ++I)
      if (OldK[I] != Empty) place(OldK[I], OldV[I]);
  }

  std::vector<uint64_t> Keys;
  std::vector<V> Vals;
  size_t Mask = 0, Count = 0;
};

} // namespace onnxp::remat

#endif // ONNXP_PARTITION_REMAT_FLATMEMO_H
