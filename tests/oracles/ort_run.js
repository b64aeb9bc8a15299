// Runs an ONNX model with onnxruntime-node on .npy inputs: the outside fp32/int8 oracle.
//
//   node ort_run.js MODEL.onnx INPUT.npy OUTPUT.npy [--runs N]
//     feeds INPUT to the model's first input, writes the first output as float32 .npy and
//     prints {"ms_per_run": ...} (mean over N runs after one warm-up).
//   node ort_run.js MODEL.onnx --feed NAME=FILE.npy [--feed ...] --out-dir DIR [--threads T]
//     feeds every named input, writes every output to DIR/<k>.npy in its own dtype and
//     DIR/outputs.json = [{"name": NAME, "file": "<k>.npy"}, ...] in the model's output order.
//     --feeds FEEDS.json reads more feeds from a file, [[NAME, FILE.npy], ...]: the isolated
//     exports have hundreds of inputs, and onnxruntime-node 1.30 segfaults while it initialises
//     when the process's command line is long (tests/oracles/README.md).
//     --save-optimized FILE.onnx also writes the graph onnxruntime runs after its optimizations
//     (which QDQ groups became QLinear* integer ops).
//
// .npy: format 1.0/2.0, little-endian float32, int8, uint8, int16, int32 ('<f4','|i1','|u1',
// '<i2','<i4'), C order. An int32 feed of an int64 model input (token ids) is widened.
'use strict';
const fs = require('fs');
const path = require('path');
const cache = process.env.TESSEL_CACHE || path.join(__dirname, '..', '..', '.cache');
const ort = require(path.join(cache, 'ort', 'node_modules', 'onnxruntime-node'));

const kTypes = {
  '<f4': ['float32', Float32Array], '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array],
  '<i2': ['int16', Int16Array], '<i4': ['int32', Int32Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not .npy`);
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = header.match(/'descr': '([^']*)'/)[1];
  if (!(descr in kTypes)) throw new Error(`${file}: unsupported dtype ${descr}`);
  const [type, Array] = kTypes[descr];
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const bytes = buf.buffer.slice(buf.byteOffset + start + headerLen, buf.byteOffset + buf.length);
  return { type, shape, data: new Array(bytes) };
}

// A tensor for input `name` of `session` from .npy data: int32 token ids widen to the int64 the
// model declares (Tessel writes ids as int32; torch exports them as int64).
function inputTensor(session, name, x) {
  const meta = (session.inputMetadata || []).find((m) => m.name === name);
  if (meta && meta.type === 'int64' && x.type === 'int32') {
    return new ort.Tensor('int64', BigInt64Array.from(x.data, (v) => BigInt(v)), x.shape);
  }
  return new ort.Tensor(x.type, x.data, x.shape);
}

function writeNpy(file, shape, data, descr = '<f4') {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.writeUInt8(0x93, 0); pre.write('NUMPY', 1, 'latin1'); pre.writeUInt8(1, 6); pre.writeUInt8(0, 7);
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function option(args, name, fallback) {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
}

async function runAll(args) {
  const model = args[0];
  const threads = Number(option(args, '--threads', '1'));
  const outDir = option(args, '--out-dir');
  const options = { graphOptimizationLevel: 'all', intraOpNumThreads: threads, interOpNumThreads: 1 };
  const optimized = option(args, '--save-optimized');
  if (optimized) options.optimizedModelFilePath = optimized;
  const session = await ort.InferenceSession.create(model, options);
  const feeds = {};
  const feed = (name, file) => {
    feeds[name] = inputTensor(session, name, readNpy(file));
  };
  for (let i = 0; i < args.length; ++i) {
    if (args[i] !== '--feed') continue;
    const spec = args[i + 1];
    const eq = spec.lastIndexOf('=');
    feed(spec.slice(0, eq), spec.slice(eq + 1));
  }
  const feedsFile = option(args, '--feeds');
  if (feedsFile) {
    let list;
    try { list = JSON.parse(fs.readFileSync(feedsFile, 'utf8')); } catch (e) { throw new Error(`${feedsFile}: ${e.message}`); }
    if (!Array.isArray(list)) throw new Error(`${feedsFile}: not a list of [name, file] pairs`);
    list.forEach((pair, k) => {
      if (!Array.isArray(pair) || pair.length !== 2) throw new Error(`${feedsFile}: entry ${k} is not [name, file]`);
      feed(pair[0], pair[1]);
    });
  }
  const start = process.hrtime.bigint();
  const result = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  fs.mkdirSync(outDir, { recursive: true });
  const index = [];
  session.outputNames.forEach((name, k) => {
    const y = result[name];
    const descr = Object.keys(kTypes).find((d) => kTypes[d][0] === y.type);
    if (!descr) throw new Error(`output ${name}: unsupported type ${y.type}`);
    writeNpy(path.join(outDir, `${k}.npy`), y.dims, y.data, descr);
    index.push({ name, file: `${k}.npy` });
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(index));
  console.log(JSON.stringify({ model: path.basename(model), outputs: index.length, ms }));
}

async function runFirst(args) {
  const runs = Number(option(args, '--runs', '1'));
  const [model, input, output] = args;
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  const feeds = { [session.inputNames[0]]: inputTensor(session, session.inputNames[0], readNpy(input)) };
  let result = await session.run(feeds);  // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; ++i) result = await session.run(feeds);
  const ms = Number(process.hrtime.bigint() - start) / 1e6 / runs;
  const y = result[session.outputNames[0]];
  writeNpy(output, y.dims, Float32Array.from(y.data));
  console.log(JSON.stringify({ model: path.basename(model), runs, ms_per_run: ms }));
}

const args = process.argv.slice(2);
(args.includes('--out-dir') ? runAll(args) : runFirst(args))
  .catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
