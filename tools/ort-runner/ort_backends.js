// ===- tools/ort-runner/ort_backends.js - One stage's ONNX Runtime session -===//
//
// Two ONNX Runtime builds run stages (both pinned in package.json):
//   - `node`: onnxruntime-node 1.30, the native CPU inference build (MLAS
//     with the host's vector units; CUDA when the install has it). It has
//     no com.microsoft training kernels.
//   - `wasm`: onnxruntime-web 1.19.2's training build
//     (dist/ort.training.wasm.min.mjs, WebAssembly SIMD; its package.json
//     maps `node` to null, so the file is imported by path). It has the
//     training kernels (*Grad, InPlaceAccumulatorV2,
//     SoftmaxCrossEntropyLossGrad); not org.pytorch.aten:ATen.
// A stage model with training ops runs in `wasm`; forward stages run in
// `node`, measured faster (docs/benchmarks/training-runner.md), unless
// --backend wasm puts every stage there.
//
// openSession(options) -> {backend, inputNames, outputNames, run(feeds) ->
// {name: {type, data, dims}}, endProfiling() -> events, release()}.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const {pathToFileURL} = require('url');

/// Where the runner's ORT packages are: beside it (npm install here, npm
/// install -g), else on the module path.
function packageDir(name) {
  for (const base of [path.join(__dirname, 'node_modules'), ...(require.resolve.paths(name) || [])]) {
    const dir = path.join(base, name);
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return '';
}

function loadNode() {
  const dir = packageDir('onnxruntime-node');
  if (!dir) throw new Error(`onnxruntime-node is not installed; run npm install --ignore-scripts in ${__dirname}`);
  return require(dir);
}

let wasmOrt = null;
async function loadWasm() {
  if (wasmOrt) return wasmOrt;
  const dir = packageDir('onnxruntime-web');
  const entry = dir && path.join(dir, 'dist', 'ort.training.wasm.min.mjs');
  if (!entry || !fs.existsSync(entry))
    throw new Error(`onnxruntime-web 1.19.2 (the training build) is not installed; run npm install --ignore-scripts in ${__dirname}`);
  wasmOrt = await import(pathToFileURL(entry).href);
  // One thread per session: every stage already has its own worker thread.
  wasmOrt.env.wasm.numThreads = 1;
  wasmOrt.env.logLevel = 'error';
  return wasmOrt;
}

const wire = (t) => ({type: t.type, data: t.data, dims: [...t.dims]});

/// What the WebAssembly build prints while FN runs: in Node it writes its
/// stdout with fs.writeSync(1, ...), and its profiler prints the events at
/// endProfiling, one JSON object a line.
async function captureStdout(fn) {
  const writeSync = fs.writeSync;
  const lines = [];
  fs.writeSync = (fd, data, ...rest) => {
    if (fd !== 1) return writeSync.call(fs, fd, data, ...rest);
    lines.push(String(data));
    return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
  };
  try {
    await fn();
  } finally {
    fs.writeSync = writeSync;
  }
  return lines.join('');
}

/// Events of an ORT profile printed as text: the lines that parse as event
/// objects.
function parseProfileText(text) {
  const events = [];
  for (let line of text.split('\n')) {
    line = line.trim().replace(/,$/, '');
    if (!line.startsWith('{')) continue;
    try {
      const e = JSON.parse(line);
      if (e && e.cat && e.name) events.push(e);
    } catch (e) {
      // not an event line
    }
  }
  return events;
}

/// O: {backend: 'node'|'wasm', model: Buffer, changed: whether it differs
/// from file's bytes, file, external: [{location, full}], optimize, threads,
/// profilePrefix, cuda: {deviceId} | null}.
async function openSession(o) {
  const base = {graphOptimizationLevel: o.optimize ? 'all' : 'disabled', executionMode: 'sequential',
                logSeverityLevel: 3};
  if (o.backend === 'wasm') {
    const ort = await loadWasm();
    const opts = {...base, executionProviders: ['wasm'], enableProfiling: !!o.profilePrefix};
    if (o.external.length)
      opts.externalData = o.external.map((e) => ({path: e.location, data: new Uint8Array(fs.readFileSync(e.full))}));
    const session = await ort.InferenceSession.create(new Uint8Array(o.model), opts);
    return {
      backend: 'wasm', ep: 'wasm', inputNames: session.inputNames, outputNames: session.outputNames,
      async run(feeds) {
        const f = {};
        for (const [n, t] of Object.entries(feeds)) f[n] = new ort.Tensor(t.type, t.data, t.dims);
        let out;
        try {
          out = await session.run(f);
        } catch (e) {
          // The WebAssembly build throws a C++ exception as a bare number.
          if (typeof e === 'number' || /^\d+$/.test(String(e && e.message || e)))
            throw new Error(`ONNX Runtime's training build failed in a kernel (C++ exception ${String(e && e.message || e)})`);
          throw e;
        }
        const r = {};
        for (const [n, t] of Object.entries(out)) r[n] = wire(t);
        return r;
      },
      async endProfiling() {
        if (!o.profilePrefix) return [];
        return parseProfileText(await captureStdout(() => session.endProfiling()));
      },
      release: () => session.release(),
    };
  }
  const ort = loadNode();
  const opts = {...base, intraOpNumThreads: o.threads, interOpNumThreads: 1};
  if (o.profilePrefix) Object.assign(opts, {enableProfiling: true, profileFilePrefix: o.profilePrefix});
  let session = null, ep = 'cpu';
  if (o.cuda) {
    try {
      session = await ort.InferenceSession.create(o.changed && !o.external.length ? new Uint8Array(o.model) : o.file,
                                                  {...opts, executionProviders: [{name: 'cuda', deviceId: o.cuda.deviceId}]});
      ep = `cuda:${o.cuda.deviceId}`;
    } catch (e) {
      session = null;
    }
  }
  // The file itself unless the runner rewrote the model (then its buffer:
  // its external data, if any, resolves against the current folder).
  const source = o.changed && !o.external.length ? new Uint8Array(o.model) : o.file;
  if (!session) session = await ort.InferenceSession.create(source, {...opts, executionProviders: ['cpu']});
  // onnxruntime-node returns no sequence or map ("Non tensor type is
  // temporarily not supported"): such graph outputs (a ZipMap's, issue 37's
  // study) are not fetched, and so not checked, and the run says so.
  const nonTensor = (session.outputMetadata || []).filter((m) => m.isTensor === false).map((m) => m.name);
  const fetches = session.outputNames.filter((n) => !nonTensor.includes(n));
  if (nonTensor.length)
    console.error(`run_pipeline: ${path.basename(o.file)}: output(s) ${nonTensor.join(', ')} not tensors ` +
                  '(onnxruntime-node returns no sequence or map): not fetched, not checked' +
                  (fetches.length ? '' : '; no tensor output left, so this stage is not run'));
  return {
    backend: 'node', ep, inputNames: session.inputNames, outputNames: fetches, nonTensorOutputs: nonTensor,
    async run(feeds) {
      const f = {};
      for (const [n, t] of Object.entries(feeds)) f[n] = new ort.Tensor(t.type, t.data, t.dims);
      if (!fetches.length) return {};
      const out = nonTensor.length ? await session.run(f, fetches) : await session.run(f);
      const r = {};
      for (const [n, t] of Object.entries(out)) r[n] = wire(t);
      return r;
    },
    async endProfiling() {
      if (!o.profilePrefix) return [];
      // onnxruntime-node writes PREFIX_<date>.json and may not return its name.
      let file = session.endProfiling();
      if (!file || !fs.existsSync(file)) {
        const dir = path.dirname(o.profilePrefix), base = path.basename(o.profilePrefix);
        file = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json')).map((f) => path.join(dir, f))[0];
      }
      if (!file || !fs.existsSync(file)) return [];
      const events = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.rmSync(file, {force: true});
      return events;
    },
    release: () => session.release(),
  };
}

/// Whether a model load failed because the build lacks an op's schema or
/// kernel; the op's name, else ''.
function missingOp(message) {
  const m = /(\S+) is not a registered function\/op/.exec(message) ||
            /Could not find an implementation for (\S+) node/.exec(message);
  return m ? m[1] : '';
}

module.exports = {openSession, missingOp, packageDir, parseProfileText};
