// ===- tools/ort-runner/pipeline_check.js - pipeline.json checked before any run -===//
//
// The runner reads a pipeline.json it did not write (issue 39 item 8): every
// field it uses is checked here, before any session opens, and a fault is
// one Error naming the field:
//   - `stages` a non-empty array (at most MAX_STAGES) of objects with a
//     string `name`, `device` and `file`, and unique ids;
//   - a stage `file` is a plain relative path inside the stage folder (no
//     `..`, not absolute, no symbolic link leading out), as ONNX Runtime
//     confines external data; the file exists, is a regular file and is not
//     empty;
//   - a stage's `kind`, when given, is "W" (issue 35: a weight-gradient
//     model, run at the action lists' W; run_pipeline.js checks that its
//     model holds backward nodes only);
//   - every stage input comes from the graph or from a stage listed, and
//     the stage graph those inputs make is acyclic;
//   - every graph output is made by a stage or a tensor-parallel all-reduce
//     (a run would otherwise wait for it forever; tensor_parallel.js checks
//     the all-reduces);
//   - data-parallel replicas (issue 33 item 5; checkReplicas): a stage's
//     `replica_devices` are distinct devices of `devices`, its own device
//     first, the same for every stage of that device, never a device that
//     holds stages of its own or serves another; its `allreduce_group` is
//     the id of an `allreduce_groups` entry listing the same devices;
//     `replica_device_ids` one integer per replica;
//     `reduced_gradients` a list of {gradient, accumulation_buffer}.
// The external data files a stage model names (TensorProto.external_data
// `location`) are confined the same way; confinedStageFiles returns them so
// that outputs can be checked against every input by file identity.
//
// ===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const {fields} = require('./protobuf_fields');
const {checkTensorParallel} = require('./tensor_parallel');

const MAX_STAGES = 4096;

/// FILE (from pipeline.json or a model) resolved inside DIR, or an Error.
function confine(dir, file, what) {
  if (typeof file !== 'string' || !file) throw new Error(`${what}: not a file name`);
  if (path.isAbsolute(file) || file.split(/[\\/]/).some((p) => p === '..'))
    throw new Error(`${what} '${file}' is not a relative path inside the stage folder`);
  const full = path.join(dir, file);
  let st;
  try {
    st = fs.statSync(full);
  } catch (e) {
    throw new Error(`${what} '${file}' does not exist in ${dir}`);
  }
  const real = fs.realpathSync(full), realDir = fs.realpathSync(dir);
  if (path.relative(realDir, real).split(path.sep)[0] === '..')
    throw new Error(`${what} '${file}' leads outside the stage folder (to ${real})`);
  if (!st.isFile()) throw new Error(`${what} '${file}' is not a regular file`);
  if (st.size === 0) throw new Error(`${what} '${file}' is empty`);
  return full;
}

/// The external data locations of a serialized model's initializers.
function externalLocations(model) {
  const out = new Set();
  for (const [f, w, g] of fields(model, 'ModelProto')) {
    if (f !== 7 || w !== 2) continue;
    for (const [gf, gw, t] of fields(g, 'GraphProto')) {
      if (gf !== 5 || gw !== 2) continue;
      for (const [tf, tw, e] of fields(t, 'TensorProto')) {
        if (tf !== 13 || tw !== 2) continue; // external_data: StringStringEntryProto
        let key = '', value = '';
        for (const [ef, ew, ev] of fields(e, 'StringStringEntryProto'))
          if (ew === 2) ef === 1 ? (key = ev.toString('utf8')) : ef === 2 ? (value = ev.toString('utf8')) : 0;
        if (key === 'location') out.add(value);
      }
    }
  }
  return [...out];
}

/// The replica fields of P's stages (see the file comment); throws one
/// Error naming the stage and the field. Sets every stage's
/// `replica_devices` (its own device alone when it has no replicas).
function checkReplicas(p, where) {
  const groups = new Map();
  if (p.allreduce_groups !== undefined) {
    if (!Array.isArray(p.allreduce_groups)) throw new Error(`${where}: "allreduce_groups" is not a list`);
    for (const g of p.allreduce_groups) {
      if (!g || typeof g !== 'object' || !Array.isArray(g.devices) || g.devices.some((d) => typeof d !== 'string'))
        throw new Error(`${where}: an all-reduce group is not an object with a list of device names "devices"`);
      if (groups.has(g.id)) throw new Error(`${where}: all-reduce group ${JSON.stringify(g.id)} is listed twice`);
      groups.set(g.id, g.devices);
    }
  }
  const known = Array.isArray(p.devices) ? new Set(p.devices) : null;
  const hosts = new Set(p.stages.map((st) => st.device));
  const servedBy = new Map(); // replica device -> the device whose stages it runs
  for (const st of p.stages) {
    const what = `${where}: ${st.name}`;
    if (st.replica_devices === undefined) {
      if (st.allreduce_group !== undefined || st.reduced_gradients !== undefined)
        throw new Error(`${what}: "allreduce_group" or "reduced_gradients" without "replica_devices"`);
      st.replica_devices = [st.device];
      continue;
    }
    const r = st.replica_devices;
    if (!Array.isArray(r) || !r.length || r.some((d) => typeof d !== 'string' || !d))
      throw new Error(`${what}: "replica_devices" is not a non-empty list of device names`);
    if (r[0] !== st.device)
      throw new Error(`${what}: "replica_devices" must start with the stage's own device ${st.device}, not ${r[0]}`);
    for (const [i, d] of r.entries()) {
      if (known && !known.has(d)) throw new Error(`${what}: replica device '${d}' is not one of "devices"`);
      if (r.indexOf(d) !== i) throw new Error(`${what}: replica device '${d}' is listed twice`);
      if (i > 0 && hosts.has(d)) throw new Error(`${what}: replica device '${d}' also runs stages of its own`);
      if (servedBy.has(d) && servedBy.get(d) !== st.device)
        throw new Error(`${what}: replica device '${d}' also runs replicas of ${servedBy.get(d)}`);
      servedBy.set(d, st.device);
    }
    // Absent (a hand-written pipeline.json): every replica on the stage's id.
    if (st.replica_device_ids === undefined) st.replica_device_ids = r.map(() => Number.isSafeInteger(st.device_id) ? st.device_id : 0);
    if (!Array.isArray(st.replica_device_ids) || st.replica_device_ids.length !== r.length ||
        st.replica_device_ids.some((i) => !Number.isSafeInteger(i)))
      throw new Error(`${what}: "replica_device_ids" is not a list of ${r.length} integers, one per replica device`);
    if (!groups.has(st.allreduce_group))
      throw new Error(`${what}: "allreduce_group" ${JSON.stringify(st.allreduce_group)} is not an id of "allreduce_groups"`);
    if (!same(groups.get(st.allreduce_group), r))
      throw new Error(`${what}: all-reduce group ${JSON.stringify(st.allreduce_group)} lists ` +
                      `[${groups.get(st.allreduce_group).join(', ')}], not its replica devices [${r.join(', ')}]`);
    if (st.reduced_gradients !== undefined &&
        (!Array.isArray(st.reduced_gradients) ||
         st.reduced_gradients.some((g) => !g || typeof g.gradient !== 'string' || typeof g.accumulation_buffer !== 'string')))
      throw new Error(`${what}: "reduced_gradients" is not a list of {gradient, accumulation_buffer}`);
  }
  // A device's stages run on the same replicas (they share its nodes' copies).
  for (const st of p.stages) {
    const other = p.stages.find((o) => o.device === st.device && !same(o.replica_devices, st.replica_devices));
    if (other)
      throw new Error(`${where}: ${st.name}: its replica devices [${st.replica_devices.join(', ')}] differ from ` +
                      `those of ${other.name} on the same device [${other.replica_devices.join(', ')}]`);
  }
}

const same = (x, y) => Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((d, i) => d === y[i]);

/// Checks pipeline P (parsed from DIR/pipeline.json); throws one Error.
/// Returns {stageFiles: [{file, model: Buffer, external: [{location, full}]}]}.
function checkPipeline(p, dir) {
  const where = path.join(dir, 'pipeline.json');
  if (!p || typeof p !== 'object' || Array.isArray(p)) throw new Error(`${where}: not a JSON object`);
  if (p.format !== 'onnx-partition.pipeline/1') throw new Error(`${where}: not an onnx-partition pipeline (format)`);
  if (!Array.isArray(p.stages)) throw new Error(`${where}: "stages" is not a list`);
  if (!p.stages.length) throw new Error(`${where}: "stages" is empty: no stage to run`);
  if (p.stages.length > MAX_STAGES) throw new Error(`${where}: ${p.stages.length} stages, at most ${MAX_STAGES}`);
  for (const key of ['graph_inputs', 'graph_outputs', 'replicated_parameters'])
    if (p[key] !== undefined && !Array.isArray(p[key])) throw new Error(`${where}: "${key}" is not a list`);
  p.graph_inputs = p.graph_inputs || [];
  p.graph_outputs = p.graph_outputs || [];
  const ids = new Map();
  Array.from(p.stages).forEach((st, i) => { // Array.from: a hole is a stage too
    const what = `${where}: stage ${i}`;
    if (!st || typeof st !== 'object') throw new Error(`${what} is not an object`);
    for (const key of ['name', 'device', 'file'])
      if (typeof st[key] !== 'string' || !st[key]) throw new Error(`${what} has no string "${key}"`);
    if (st.id === undefined) st.id = i;
    if (ids.has(st.id)) throw new Error(`${what}: id ${JSON.stringify(st.id)} is listed twice`);
    ids.set(st.id, st);
    if (st.inputs !== undefined && !Array.isArray(st.inputs)) throw new Error(`${what}: "inputs" is not a list`);
    if (st.outputs !== undefined && !Array.isArray(st.outputs)) throw new Error(`${what}: "outputs" is not a list`);
    st.inputs = st.inputs || [];
    st.outputs = st.outputs || [];
    // Issue 35: the one stage kind pipeline.json marks, run at W actions.
    if (st.kind !== undefined && st.kind !== 'W') throw new Error(`${what}: "kind" is ${JSON.stringify(st.kind)}, not "W"`);
  });
  for (const g of p.graph_inputs)
    if (!g || typeof g.name !== 'string') throw new Error(`${where}: a graph input has no name`);
  for (const r of p.replicated_parameters || [])
    if (!r || typeof r !== 'object' || (r.partials !== undefined && (typeof r.partials !== 'object' || !r.partials)))
      throw new Error(`${where}: a replicated parameter is not an object with "partials"`);
  checkReplicas(p, where);
  // Stage graph: inputs from earlier stages; acyclic (Kahn's algorithm).
  const after = new Map([...ids.keys()].map((id) => [id, new Set()]));
  for (const st of p.stages)
    for (const inp of st.inputs) {
      if (!inp || typeof inp.tensor !== 'string') throw new Error(`${where}: ${st.name} has an input without "tensor"`);
      if (inp.from === 'graph') continue;
      if (!ids.has(inp.from))
        throw new Error(`${where}: ${st.name} reads '${inp.tensor}' from stage ${JSON.stringify(inp.from)}, which is not listed`);
      if (inp.from !== st.id) after.get(inp.from).add(st.id);
    }
  const indeg = new Map([...ids.keys()].map((id) => [id, 0]));
  for (const s of after.values()) for (const t of s) indeg.set(t, indeg.get(t) + 1);
  const queue = [...indeg].filter(([, d]) => d === 0).map(([id]) => id);
  let seen = 0;
  while (queue.length) {
    ++seen;
    for (const t of after.get(queue.pop())) {
      indeg.set(t, indeg.get(t) - 1);
      if (!indeg.get(t)) queue.push(t);
    }
  }
  if (seen !== ids.size) {
    const cyc = [...indeg].filter(([, d]) => d > 0).map(([id]) => ids.get(id).name);
    throw new Error(`${where}: the stages' inputs form a cycle (${cyc.join(', ')}): no order runs them`);
  }
  const made = new Set();
  for (const st of p.stages) for (const o of st.outputs) if (o && typeof o.tensor === 'string') made.add(o.tensor);
  // Issue 34 item 3: tensor-parallel all-reduces make their tensors too.
  for (const r of checkTensorParallel(p, where)) made.add(r.tensor);
  for (const o of p.graph_outputs) {
    if (!o || typeof o.name !== 'string') throw new Error(`${where}: a graph output has no name`);
    if (!made.has(o.name))
      throw new Error(`${where}: graph output '${o.name}' is made by no stage`);
  }
  // Files: confined, present, not empty; their external data too.
  const stageFiles = p.stages.map((st) => {
    const file = confine(dir, st.file, `${st.name}: stage file`);
    const model = fs.readFileSync(file);
    let locations;
    try {
      locations = externalLocations(model);
    } catch (e) {
      throw new Error(`${st.name}: stage file '${st.file}' is not an ONNX model (${e.message})`);
    }
    const modelDir = path.dirname(file);
    const external = locations.map((loc) => ({location: loc, full: confine(modelDir, loc, `${st.name}: external data`)}));
    return {file, model, external};
  });
  return {stageFiles};
}

/// Throws when an output file is one of the inputs (same device and inode,
/// or the same path) or two outputs are the same file. OUTPUTS: [[option,
/// path]]; INPUTS: paths.
function checkOutputs(outputs, inputs) {
  const id = (f) => {
    try {
      const s = fs.statSync(f);
      return `${s.dev}:${s.ino}`;
    } catch (e) {
      return `path:${path.resolve(f)}`;
    }
  };
  const ins = new Map(inputs.filter(Boolean).map((f) => [id(f), f]));
  const outs = new Map();
  for (const [opt, f] of outputs) {
    if (!f) continue;
    const k = id(f);
    if (ins.has(k)) throw new Error(`${opt} ${f} would overwrite the input ${ins.get(k)}`);
    if (outs.has(k)) throw new Error(`${opt} ${f} is also the file of ${outs.get(k)}`);
    outs.set(k, opt);
  }
}

module.exports = {checkPipeline, checkOutputs, confine, externalLocations, MAX_STAGES};
