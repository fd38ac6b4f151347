// A stand-in for test/ort/profile.js that never finishes (signal-during-
// measure.test): it writes a file into its TMPDIR and a partial profile at
// -o, records its pid, then waits for a signal. The tool's handler must
// stop it and remove both files before the tool dies.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const out = process.argv[process.argv.indexOf('-o') + 1];
const own = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-profile-'));
fs.writeFileSync(path.join(own, 'ort_1.json'), '[');
fs.writeFileSync(out, '[\n{"partial": true}');
fs.writeFileSync(process.env.FAKE_ORT_PIDFILE, String(process.pid));
process.on('SIGTERM', () => {}); // a child slow to stop: the tool kills it after its grace
setInterval(() => {}, 1000);
