// test/lit/Inputs/sharding_specs.js MODEL.onnx - prints a model's ONNX IR 11
// multi-device annotations (issue 34 item 3), read with the runner's wire
// reader (ONNX 1.12's Python module predates the fields): the IR version,
// each DeviceConfigurationProto (ModelProto 26), and per node with
// NodeProto.device_configurations (10) its pipeline stage and sharding specs
// as tensor@axis[dim/shards,...] on devices.
'use strict';

const fs = require('fs');
const {fields} = require('../../../tools/ort-runner/protobuf_fields');

const text = (v) => Buffer.from(v).toString('utf8');
const model = fs.readFileSync(process.argv[2]);
const stagesPerNode = new Map();
for (const [f, w, v] of fields(model)) {
  if (f === 1 && w === 0) console.log(`ir_version ${v}`);
  if (f === 26) {
    const c = {devices: []};
    for (const [cf, , cv] of fields(v)) {
      if (cf === 1) c.name = text(cv);
      if (cf === 2) c.count = Number(cv);
      if (cf === 3) c.devices.push(text(cv));
    }
    console.log(`configuration ${c.name}: ${c.count} devices ${c.devices.join(' ')}`);
  }
  if (f !== 7) continue;
  for (const [gf, , node] of fields(v)) {
    if (gf !== 1) continue;
    let name = '', line = '';
    for (const [nf, , nv] of fields(node)) {
      if (nf === 3) name = text(nv);
      if (nf !== 10) continue;
      let stage = '', specs = [];
      for (const [df, , dv] of fields(nv)) {
        if (df === 3) stage = Number(dv);
        if (df !== 2) continue;
        let tensor = '', devices = [], dims = [], groups = 0;
        for (const [sf, sw, sv] of fields(dv)) {
          if (sf === 1) tensor = text(sv);
          if (sf === 2) devices.push(Number(sv));
          if (sf === 3) ++groups;
          if (sf !== 4) continue;
          let axis = 0;
          const parts = [];
          for (const [xf, , xv] of fields(sv)) {
            if (xf === 1) axis = Number(xv);
            if (xf !== 2) continue;
            const p = {};
            for (const [pf, , pv] of fields(xv)) p[pf] = Number(pv);
            parts.push(`${p[1]}/${p[3]}`);
          }
          dims.push(`@${axis}[${parts.join(',')}]`);
        }
        specs.push(`${tensor}${dims.join('')} on ${devices.join(',')}${groups ? ` (${groups} groups)` : ''}`);
      }
      line = `stage ${stage}` + (specs.length ? `: ${specs.join('; ')}` : '');
    }
    if (line) stagesPerNode.set(name, line);
  }
}
const counts = new Map();
for (const [name, line] of stagesPerNode) {
  if (line.includes(':')) console.log(`node ${name}: ${line}`);
  const stage = line.split(':')[0];
  counts.set(stage, (counts.get(stage) || 0) + 1);
}
for (const [stage, n] of counts) console.log(`${stage}: ${n} nodes`);
