// ONNX Runtime as a contender (peers.py's protocol): node ort_worker.js DIR [--profile | --first-result].
// CPU execution provider, 2 intra-op threads, every graph optimization, ORT's memory arena and memory
// pattern on (its defaults, stated). DIR/case.json names the input files (raw float32) and shapes;
// DIR/model.onnx is the model; the output tensor is preallocated and bound. `run N` answers N run times in
// ms, each after the inputs are rewritten from the master copy: the wall time of `session.run` from
// JavaScript, which includes the Node binding's work after the run (it copies the output into a freshly
// allocated buffer that it returns: milliseconds for a 64 MB output). With --profile, ORT's profiler is on
// for the whole session and `profile` answers ORT's own time of every run so far, in order (`model_run`):
// without the binding's copy, but with the profiler's own cost (tens of microseconds a run on the small
// models). `overhead N` answers N run times of a one-float Identity model (DIR/identity.onnx), `save`
// writes DIR/out.<ort|ort_own>.bin, `quit` ends. With --first-result it prints, as JSON, the session
// creation and the first run's times, and exits.
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

function readF32(file) {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

// The cost of the smallest call: `run N` times of DIR/identity.onnx (one float through Identity), the same
// session options. What a run costs beyond its kernels: the binding's call and ORT's own per-run work.
async function callOverhead(dir, count) {
  const session = await ort.InferenceSession.create(path.join(dir, 'identity.onnx'), {
    executionProviders: ['cpu'], intraOpNumThreads: 2, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const feeds = {x: new ort.Tensor('float32', new Float32Array(1), [1])};
  const fetches = {y: new ort.Tensor('float32', new Float32Array(1), [1])};
  const times = [];
  for (let r = 0; r < count; ++r) {
    const t = process.hrtime.bigint();
    await session.run(feeds, fetches);
    times.push(msSince(t).toFixed(6));
  }
  await session.release();
  return times;
}

// ORT's own duration of every run, in order: the `model_run` events of the session's profile (ends profiling).
function profiledRuns(session, dir) {
  session.endProfiling();
  const file = fs.readdirSync(dir).find((f) => f.startsWith('ort_profile') && f.endsWith('.json'));
  if (!file) throw new Error(`no profile written in ${dir}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  return events.filter((e) => e.cat === 'Session' && e.name === 'model_run').map((e) => (e.dur / 1e3).toFixed(6));
}

async function main() {
  const dir = process.argv[2];
  const firstResult = process.argv.includes('--first-result');
  const profile = process.argv.includes('--profile');
  const spec = JSON.parse(fs.readFileSync(path.join(dir, 'case.json'), 'utf8'));
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    executionProviders: ['cpu'], intraOpNumThreads: 2, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential', enableCpuMemArena: true, enableMemPattern: true,
    enableProfiling: profile, profileFilePrefix: path.join(dir, 'ort_profile')});
  const createMs = msSince(t0);
  const masters = spec.inputs.map((i) => readF32(path.join(dir, i.file)));
  const live = masters.map((m) => new Float32Array(m));
  const feeds = {};
  session.inputNames.forEach((name, k) => { feeds[name] = new ort.Tensor('float32', live[k], spec.inputs[k].shape); });
  const outName = session.outputNames[0];
  const outLen = spec.output.reduce((a, b) => a * b, 1);
  const fetches = {[outName]: new ort.Tensor('float32', new Float32Array(outLen), spec.output)};
  if (firstResult) {
    const t1 = process.hrtime.bigint();
    await session.run(feeds, fetches);
    console.log(JSON.stringify({session_ms: createMs, first_run_ms: msSince(t1)}));
    return;
  }
  console.log('ready');
  const rl = readline.createInterface({input: process.stdin});
  for await (const line of rl) {
    const cmd = line.trim().split(/\s+/);
    if (cmd[0] === 'quit' || cmd[0] === '') break;
    if (cmd[0] === 'run') {
      const times = [];
      for (let r = 0; r < Number(cmd[1]); ++r) {
        live.forEach((l, k) => l.set(masters[k]));
        const t = process.hrtime.bigint();
        await session.run(feeds, fetches);
        times.push(msSince(t).toFixed(6));
      }
      console.log(times.join(' '));
    } else if (cmd[0] === 'profile') {
      console.log(profiledRuns(session, dir).join(' '));
    } else if (cmd[0] === 'overhead') {
      console.log((await callOverhead(dir, Number(cmd[1]))).join(' '));
    } else if (cmd[0] === 'save') {
      const file = path.join(dir, profile ? 'out.ort_own.bin' : 'out.ort.bin');
      fs.writeFileSync(file, Buffer.from(fetches[outName].data.buffer));
      console.log('ok');
    }
  }
  rl.close();
}

main().catch((e) => { console.error(`ort_worker: ${e.message}`); process.exit(1); });
