// ===- tools/ort-runner/stage_worker.js - One stage's session in its own thread -===//
//
// DeviceThread (main thread) starts a worker thread running this file, one
// per device; the thread opens the sessions of the device's stages
// (ort_backends.js) and answers 'init', 'run' and 'end' messages for them.
// StageWorker is one stage's handle. Stages on different devices run
// concurrently.
//
// Backend (run_pipeline.js resolves --backend auto to `wasm` for a training
// plan, else `node`): `wasm` the training build only; `node`
// onnxruntime-node (3.5-5x faster on forward stages,
// docs/benchmarks/training-runner.md) and the training build where
// onnxruntime-node lacks an op's kernel or the stage accumulates gradients
// (its InPlaceAccumulatorV2 buffers are exposed, accumulators.js). A stage
// neither build runs is reported by the op it needs.
//
// ===----------------------------------------------------------------------===//
'use strict';

const {Worker, parentPort, workerData} = require('worker_threads');
const {performance} = require('perf_hooks');
const {openSession, missingOp} = require('./ort_backends');

async function open(w) {
  const common = {model: w.model, file: w.file, external: w.external, optimize: w.optimize, threads: w.threads,
                  profilePrefix: w.profilePrefix, cuda: w.cuda};
  // node: onnxruntime-node wherever it has the kernels, the training build
  // where it must; wasm: the training build only.
  const order = w.backend === 'wasm' ? ['wasm'] : w.accumulators ? ['wasm'] : ['node', 'wasm'];
  let last = null;
  for (const backend of order) {
    try {
      return await openSession({...common, backend});
    } catch (e) {
      last = e;
      // Only a missing kernel sends the stage to the other build.
      if (!missingOp(String(e && e.message || e))) break;
    }
  }
  throw last;
}

function workerMain() {
  const sessions = new Map();
  parentPort.on('message', async (msg) => {
    const reply = (m, transfer) => parentPort.postMessage({...m, id: msg.id}, transfer);
    try {
      if (msg.type === 'init') {
        const session = await open(msg.options);
        sessions.set(msg.key, session);
        reply({type: 'ready', inputs: session.inputNames, outputs: session.outputNames, backend: session.backend,
               nonTensorOutputs: session.nonTensorOutputs || [],
               ep: session.ep});
      } else if (msg.type === 'run') {
        const session = sessions.get(msg.key);
        const t0 = performance.now();
        const outputs = await session.run(msg.feeds);
        const t1 = performance.now();
        const buffers = [];
        for (const t of Object.values(outputs))
          if (t.data.buffer && !buffers.includes(t.data.buffer)) buffers.push(t.data.buffer);
        reply({type: 'done', mb: msg.mb, outputs, ms: t1 - t0, start: performance.timeOrigin + t0,
               end: performance.timeOrigin + t1}, buffers);
      } else if (msg.type === 'end') {
        const session = sessions.get(msg.key);
        const profile = session ? await session.endProfiling() : [];
        if (session) await session.release();
        sessions.delete(msg.key);
        reply({type: 'ended', profile});
      }
    } catch (e) {
      reply({type: 'error', message: String(e && e.message || e)});
    }
  });
}

/// One thread per device: it holds the sessions of every stage on the
/// device (a device runs one stage at a time, so one thread is exact), and
/// the WebAssembly build is compiled once per device, not per stage.
class DeviceThread {
  constructor() {
    this.worker = new Worker(__filename, {workerData: {stageWorker: true}});
    this.calls = new Map();
    this.nextId = 0;
    this.worker.on('message', (m) => {
      const call = this.calls.get(m.id);
      this.calls.delete(m.id);
      if (call) call(m);
    });
    const failAll = (message) => {
      for (const call of this.calls.values()) call({type: 'error', message});
      this.calls.clear();
    };
    this.worker.on('error', (e) => failAll(e.message));
    // A thread that dies (an aborting WebAssembly module) must not leave a
    // call waiting forever.
    this.worker.on('exit', (code) => failAll(`the device's thread exited (code ${code})`));
  }
  call(msg) {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.calls.set(id, resolve);
      this.worker.postMessage({...msg, id});
    });
  }
  terminate() {
    return this.worker.terminate();
  }
}

/// The main thread's handle on one stage's session in its device's thread.
/// OPTIONS are open()'s.
/// REPLICA (issue 33 item 5): {device, replica, replicas} when the stage
/// runs as data-parallel replicas; this handle is then one replica's
/// session, on its own device's thread, named STAGE@DEVICE past the first.
class StageWorker {
  constructor(stage, options, thread, replica = {}) {
    const device = replica.device || stage.device, r = replica.replica || 0;
    Object.assign(this, {stage, options, thread, pending: null, device, replica: r, replicas: replica.replicas || 1,
                         name: r ? `${stage.name}@${device}` : stage.name, key: r ? `${stage.id}@${device}` : `${stage.id}`});
  }
  async request(msg) {
    this.pending = true;
    const m = await this.thread.call({...msg, key: this.key, options: msg.type === 'init' ? this.options : undefined});
    this.pending = null;
    if (m.type === 'error') throw new Error(`${this.name}: ${m.message}`);
    return m;
  }
}

if (parentPort && workerData && workerData.stageWorker) workerMain();

module.exports = {StageWorker, DeviceThread, open};
