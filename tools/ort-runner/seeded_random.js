// tools/ort-runner/seeded_random.js - the one seeded generator of the ORT scripts.
//
// mulberry32: small, seedable and identical on every platform, so
// run_stages.js and run_pipeline.js feed the same inputs for the same --seed.
// The range of each integer input comes from the model: input_ranges.js.
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

module.exports = {rng};
