// SPDX-License-Identifier: LGPL-2.1-or-later
// Runs the Resize models listed by make-vectors.py with ONNX Runtime's CPU
// provider (npm onnxruntime-node) and writes each output as little-endian
// float32. Usage: NODE_PATH=<scratch>/node_modules node run-ort.js jobs.json
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  ort.env.logLevel = 'error';
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  for (const job of jobs) {
    const session = await ort.InferenceSession.create(job.model);
    const buf = fs.readFileSync(job.input);
    const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    const out = await session.run({ X: new ort.Tensor('float32', data, job.shape) });
    const y = out.Y.data;
    fs.writeFileSync(job.output, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
