// test/ort/seeded_random.js - the one seeded generator of the ORT scripts.
//
// mulberry32: small, seedable and identical on every platform, so
// run_stages.js and run_pipeline.js feed the same inputs for the same --seed.
'use strict';

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/// Integer graph inputs take values in [0, integerBound(name)): 16 makes a
/// valid Gather index into any table of 16 rows or more; an input named like
/// a mask (BERT's `input_mask`, `attention_mask`) gets 0 or 1. A mask is
/// binary by definition, and ONNX Runtime's Attention fusion relies on it:
/// the unfused graph adds (1 - m) * -10000 to the scores, the fused
/// Attention only asks m != 0, so a mask of 15 (+140000) gave the BERT toy a
/// relative error of 1.4e-2 between ORT's optimization levels on the
/// *original* model (docs/benchmarks.md, "BERT toy with optimizations on").
function integerBound(name) {
  return /mask/i.test(name) ? 2 : 16;
}

module.exports = {rng, integerBound};
