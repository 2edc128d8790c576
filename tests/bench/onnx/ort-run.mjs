#!/usr/bin/env node
// Run an ONNX model with ONNX Runtime (CPU) and print its latency: the peer
// side of the IR runtime's benchmark. Also dumps outputs, so the ONNX
// translations can be checked against reference data.
//
// Usage:
//   node tests/bench/onnx/ort-run.mjs --model M.onnx [--threads N] [--runs N]
//        [--warmup N] [--input NAME=FILE.f32 ...] [--dump DIR] [--json]
//        [--ort-dir DIR] [--profile DIR]
//
//   --model     the .onnx file
//   --threads   intra-op threads (default 1); inter-op is always 1, sequential
//   --runs      timed runs (default 100); --warmup untimed runs first (default 10)
//   --input     raw little-endian float32 data for input NAME (its size must
//               match the input's shape); inputs not given get deterministic
//               pseudo-random values in [0, 1)
//   --dump      write each output as DIR/NAME.f32 (raw float32), after the runs
//   --json      print one JSON object instead of the text line
//   --profile   also run with ONNX Runtime's profiler (enableProfiling) after
//               the timed runs: a second session, --runs more runs, its JSON
//               trace written into DIR; prints (or adds to --json) the time
//               per run of each node (the median over the runs, warm-up
//               excluded: "nodes": name, op type, ms, input shapes) and
//               their sums per op type ("op_types")
//   --ort-dir   a folder holding node_modules/onnxruntime-node (installed with
//               `npm install --ignore-scripts onnxruntime-node`); default
//               $M2I_ORT_DIR, then tests/bench/ort, then normal resolution
//
// Output (text): "ort <model> threads=N runs=N median=X ms p90=Y ms mean=Z ms min=W ms cpu=C ms"
// Output (--json): {"runtime":"onnxruntime","version":...,"model":...,
//   "threads":N,"runs":N,"median_ms":X,"p90_ms":Y,"mean_ms":Z,"min_ms":W,"cpu_ms":C}
// (cpu: the process's CPU time per run, every thread)
// Exit status 0 on success, 1 with a message on stderr otherwise.

import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function usage(msg) {
  if (msg) process.stderr.write(`ort-run: ${msg}\n`);
  process.stderr.write('usage: node ort-run.mjs --model M.onnx [--threads N] [--runs N] ' +
    '[--warmup N] [--input NAME=FILE.f32 ...] [--dump DIR] [--json] [--ort-dir DIR]\n');
  process.exit(1);
}

function parseArgs(argv) {
  const a = { threads: 1, runs: 100, warmup: 10, inputs: {}, json: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${k} needs a value`);
      return argv[++i];
    };
    const count = (v, min) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) usage(`${k} wants an integer >= ${min}, got '${v}'`);
      return n;
    };
    if (k === '--model') a.model = next();
    else if (k === '--threads') a.threads = count(next(), 1);
    else if (k === '--runs') a.runs = count(next(), 1);
    else if (k === '--warmup') a.warmup = count(next(), 0);
    else if (k === '--dump') a.dump = next();
    else if (k === '--ort-dir') a.ortDir = next();
    else if (k === '--profile') a.profile = next();
    else if (k === '--json') a.json = true;
    else if (k === '--input') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) usage(`--input wants NAME=FILE, got '${v}'`);
      a.inputs[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (k === '-h' || k === '--help') usage();
    else usage(`unknown argument '${k}'`);
  }
  if (!a.model) usage('--model is required');
  return a;
}

function loadOrt(ortDir) {
  const candidates = [ortDir, process.env.M2I_ORT_DIR, path.join(here, '..', 'ort')]
    .filter((d) => d);
  for (const dir of candidates) {
    if (existsSync(path.join(dir, 'node_modules', 'onnxruntime-node'))) {
      return createRequire(path.join(path.resolve(dir), 'package.json'))('onnxruntime-node');
    }
  }
  try {
    return createRequire(import.meta.url)('onnxruntime-node');
  } catch {
    usage('onnxruntime-node not found: install it with `npm install --ignore-scripts ' +
      'onnxruntime-node` in a folder and pass --ort-dir FOLDER (or set M2I_ORT_DIR)');
  }
}

// A fixed pseudo-random sequence (xorshift32) so runs are repeatable.
function fillRandom(arr) {
  let s = 0x2545f491;
  for (let i = 0; i < arr.length; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    arr[i] = s / 4294967296;
  }
}

function percentile(sorted, p) {
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[idx];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(args.model)) usage(`no model file '${args.model}'`);
  const ort = loadOrt(args.ortDir);
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3, // errors only: keep the benchmark's output clean
  };
  const session = await ort.InferenceSession.create(args.model, options);

  const feeds = {};
  const meta = session.inputMetadata || [];
  for (const name of session.inputNames) {
    const m = Array.isArray(meta) ? meta.find((x) => x.name === name) : meta[name];
    const dims = (m && m.shape) || [];
    if (dims.some((d) => typeof d !== 'number' || d < 0)) {
      usage(`input ${name} has a dynamic shape ${JSON.stringify(dims)}; give a static model`);
    }
    const size = dims.reduce((p, d) => p * d, 1);
    const data = new Float32Array(size);
    if (args.inputs[name]) {
      const buf = readFileSync(args.inputs[name]);
      if (buf.length !== size * 4) {
        usage(`${args.inputs[name]} has ${buf.length} bytes; input ${name} ` +
          `${JSON.stringify(dims)} wants ${size * 4}`);
      }
      for (let i = 0; i < size; i++) data[i] = buf.readFloatLE(i * 4);
    } else {
      fillRandom(data);
    }
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  for (const name of Object.keys(args.inputs)) {
    if (!session.inputNames.includes(name)) {
      usage(`the model has no input '${name}' (it has ${session.inputNames.join(', ')})`);
    }
  }

  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  const times = [];
  let outputs;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < args.runs; i++) {
    const t0 = performance.now();
    outputs = await session.run(feeds);
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  const sorted = [...times].sort((x, y) => x - y);
  const res = {
    runtime: 'onnxruntime',
    version: (ort.env && ort.env.versions && ort.env.versions.common) || 'unknown',
    model: args.model,
    threads: args.threads,
    runs: args.runs,
    median_ms: percentile(sorted, 0.5),
    p90_ms: percentile(sorted, 0.9),
    mean_ms: times.reduce((p, t) => p + t, 0) / times.length,
    min_ms: sorted[0],
    // CPU time of every thread of the process (ONNX Runtime's and node's)
    cpu_ms: (cpu.user + cpu.system) / 1000 / args.runs,
  };

  if (args.dump) {
    mkdirSync(args.dump, { recursive: true });
    for (const [name, t] of Object.entries(outputs)) {
      // int64 outputs (indices, counts) come as BigInt64Array
      const f32 = Float32Array.from(t.data, (v) => Number(v));
      const file = path.join(args.dump, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.f32`);
      writeFileSync(file, Buffer.from(f32.buffer));
    }
  }
  if (args.profile) {
    Object.assign(res, await profile(ort, args, options, feeds));
  }
  if (args.json) {
    process.stdout.write(JSON.stringify(res) + '\n');
  } else {
    const f = (x) => x.toFixed(3);
    process.stdout.write(`ort ${path.basename(args.model)} threads=${res.threads} ` +
      `runs=${res.runs} median=${f(res.median_ms)} ms p90=${f(res.p90_ms)} ms ` +
      `mean=${f(res.mean_ms)} ms min=${f(res.min_ms)} ms cpu=${f(res.cpu_ms)} ms\n`);
    if (res.op_types) {
      const total = Object.values(res.op_types).reduce((p, t) => p + t, 0);
      process.stdout.write(`profile: ${f(total)} ms of nodes per run (${args.runs} runs)\n`);
      for (const [op, ms] of Object.entries(res.op_types).sort((x, y) => y[1] - x[1])) {
        process.stdout.write(`  ${op.padEnd(24)} ${f(ms).padStart(10)} ` +
          `${(100 * ms / total).toFixed(1).padStart(5)}%\n`);
      }
    }
  }
}

// Runs the model args.runs times in a session with ONNX Runtime's profiler
// on and reads its trace back: the time of each node per run (kernel time
// only, as ORT reports it) and the totals per op type.
async function profile(ort, args, options, feeds) {
  const dir = path.resolve(args.profile);
  mkdirSync(dir, { recursive: true });
  const prefix = path.join(dir, `ort-${process.pid}`);
  const session = await ort.InferenceSession.create(args.model,
    { ...options, enableProfiling: true, profileFilePrefix: prefix });
  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  for (let i = 0; i < args.runs; i++) await session.run(feeds);
  session.endProfiling();
  const base = path.basename(prefix);
  const file = readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json')).sort().pop();
  if (!file) throw new Error(`ONNX Runtime wrote no profile into ${dir}`);
  const events = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  // Each node's time per run (a node may run more than once in a run), in
  // run order: the runs are told apart by the session's model_run events.
  const runEnds = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
    .map((e) => e.ts + e.dur).sort((x, y) => x - y);
  const runOf = (ts) => {
    let lo = 0, hi = runEnds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (runEnds[mid] < ts) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  const nodes = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const run = runOf(e.ts);
    if (run < args.warmup) continue;
    const k = nodes.get(name) || {
      name, op: (e.args && e.args.op_name) || '?',
      shapes: ((e.args && e.args.input_type_shape) || []).map((t) => Object.values(t)[0]),
      runs: new Map(),
    };
    k.runs.set(run, (k.runs.get(run) || 0) + e.dur / 1000);
    nodes.set(name, k);
  }
  const list = [...nodes.values()].map((k) => {
    const v = [...k.runs.values()].sort((x, y) => x - y);
    return { name: k.name, op: k.op, shapes: k.shapes, ms: v[v.length >> 1] };
  });
  const opTypes = {};
  for (const k of list) opTypes[k.op] = (opTypes[k.op] || 0) + k.ms;
  return { profile_file: path.join(dir, file), nodes: list, op_types: opTypes };
}

main().catch((e) => {
  process.stderr.write(`ort-run: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
