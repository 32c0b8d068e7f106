/**
 * `node --import tsx bench/profile-layers.ts <file.cpuprofile> [--cpu-us N] [--svg out.svg] [--title T] [--json] [--dist <checkout>/dist]`
 *
 * Where a server's CPU time goes, by layer of the HTTP path (Performance III item 1). Each sample's
 * stack is resolved through dist/'s source maps to the source file of every frame (src/… or
 * node_modules/…), then given to one layer:
 * - the **outermost** frame that belongs to a layer with its own code decides it, and the layer
 *   keeps everything it calls (self + children): the token lookup's SQL is the token lookup's, a
 *   presenter's JSON work the presenter's. Those layers: token lookup, rate limit, usage counting,
 *   validation, serialisation, logging, presenter, service (split by its innermost frame into the
 *   service's own code, Kysely and the driver);
 * - a stack in none of them goes to the innermost frame's kind: the envelope hook, route handler,
 *   Fastify core (routing, hooks runner, reply), Node's HTTP and sockets, garbage collection,
 *   V8/native (`(program)`), other.
 * Idle time is left out; shares are of the busy time. `--cpu-us` (the server's CPU per request,
 * from the same bench run) turns shares into µs per request. `--svg` writes a flame graph of the
 * same resolved stacks (bench/flamegraph.ts).
 */
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { flameGraphSvg } from './flamegraph.ts';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A frame resolved to its source: `source` is relative (src/…, node_modules/…, node:…) or '' for V8's own. */
interface Frame {
  name: string;
  source: string;
  line: number;
}

const ROOT = path.resolve(import.meta.dirname, '..');

/** `--dist`: where the profiled build's dist/ is now (a profile of an older build, kept in another checkout). */
let distDir = path.join(ROOT, 'dist');
const maps = new Map<string, SourceMap | null>();
function sourceMapOf(file: string): SourceMap | null {
  if (!maps.has(file)) {
    let map: SourceMap | null = null;
    try {
      const moved = file.startsWith(path.join(ROOT, 'dist')) ? distDir + file.slice(path.join(ROOT, 'dist').length) : file;
      map = new SourceMap(JSON.parse(fs.readFileSync(`${moved}.map`, 'utf8')));
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return maps.get(file)!;
}

function resolve(frame: CallFrame): Frame {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return { name, source: '', line: 0 };
  if (frame.url.startsWith('node:')) return { name, source: frame.url, line: frame.lineNumber + 1 };
  const file = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  const map = file.includes(`${path.sep}dist${path.sep}`) ? sourceMapOf(file) : null;
  if (map) {
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number; name?: string };
    if (entry?.originalSource) {
      const original = entry.originalSource.startsWith('file://')
        ? fileURLToPath(entry.originalSource)
        : path.resolve(path.dirname(file), entry.originalSource);
      return { name, source: path.relative(ROOT, original), line: (entry.originalLine ?? 0) + 1 };
    }
  }
  return { name, source: path.relative(ROOT, file), line: frame.lineNumber + 1 };
}

const pkg = (source: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1] ?? null;

/** Layers that keep what they call (the outermost frame of one decides a stack). */
function ownLayer(f: Frame): string | null {
  const s = f.source;
  const p = pkg(s);
  if (s === 'src/http/auth.ts' || (s === 'src/services/merchants.service.ts' && f.name !== 'recordLastUsed') || s === 'src/store/edge-scopes.ts')
    return 'token lookup';
  if (s === 'src/http/rate-limit.ts' || s === 'src/domain/token-bucket.ts' || p === '@fastify/rate-limit') return 'rate limit';
  if (s === 'src/http/usage.ts' || s === 'src/services/usage.service.ts') return 'usage counting';
  if (
    s === 'src/http/validation.ts' ||
    p === 'ajv' ||
    p === '@fastify/ajv-compiler' ||
    s.endsWith('fastify/lib/validation.js') ||
    (s === '' && /^validate\d*$/.test(f.name))
  )
    return 'validation';
  if (p === 'fast-json-stringify' || p === '@fastify/fast-json-stringify-compiler' || (s.endsWith('fastify/lib/reply.js') && /^serialize/.test(f.name)))
    return 'serialisation';
  if (
    p === 'pino' ||
    p === 'sonic-boom' ||
    p === 'thread-stream' ||
    p === 'pino-std-serializers' ||
    s.endsWith('fastify/lib/logger-factory.js') ||
    s.endsWith('fastify/lib/logger-pino.js') ||
    s.startsWith('src/runtime/log')
  )
    return 'logging';
  if (s.startsWith('src/present/')) return 'presenter';
  if (s.startsWith('src/services/') || s.startsWith('src/domain/')) return 'service';
  // A query resumed after an await has no service frame under it: still the service's storage work.
  if (serviceSublayer(f)) return 'service';
  return null;
}

/** Inside the service: the innermost of Kysely or the driver, else the service's own code. */
function serviceSublayer(f: Frame): string | null {
  const p = pkg(f.source);
  if (p === 'better-sqlite3' || p === 'pg' || p === 'pg-protocol' || p === 'pg-pool' || p === 'postgres-array' || p === 'pg-types') return 'service: driver';
  // better-sqlite3's statements run in native code, sampled as the self time of the JavaScript
  // function that calls them: the store's or Kysely's SQLite `executeQuery`.
  if (f.name.endsWith('executeQuery') && (f.source === 'src/store/db.ts' || f.source.endsWith('kysely/dist/esm/dialect/sqlite/sqlite-driver.js')))
    return 'service: driver';
  if (p === 'kysely' || f.source.startsWith('src/store/')) return 'service: Kysely and store';
  return null;
}

/** A stack in no layer of its own: the innermost frame's kind. */
function kind(f: Frame): string | null {
  const s = f.source;
  if (f.name === '(garbage collector)') return 'garbage collection';
  if (f.name === '(program)') return 'V8 / native (program)';
  if (s === 'src/http/envelope.ts') return 'envelope hook';
  if (s.startsWith('src/http/') || s.startsWith('src/plugins/') || s === 'src/app.ts') return 'route handlers and other src/http';
  const p = pkg(s);
  if (
    p === 'fastify' ||
    p === 'find-my-way' ||
    p === 'avvio' ||
    p === 'light-my-request' ||
    p?.startsWith('@fastify/') ||
    p === 'fastify-plugin' ||
    p === 'toad-cache' ||
    p === 'process-warning'
  )
    return 'Fastify core (routing, hooks, reply)';
  // The write(2) of a response on loopback runs the receiver's TCP path too, and under load is where
  // the OS most often hands the core to the load generator: a sampled profile's time there is more
  // than its CPU time.
  if (f.name === 'writeUtf8String' || f.name === 'writeBuffer' || f.name === 'writev') return 'socket write (syscall)';
  if (s.startsWith('node:')) return 'Node HTTP and sockets';
  return null;
}

/** The layer of one stack (root first). */
function layerOf(stack: Frame[]): string {
  for (let i = 0; i < stack.length; i++) {
    const own = ownLayer(stack[i]);
    if (!own) continue;
    if (own !== 'service') return own;
    for (let j = stack.length - 1; j >= i; j--) {
      const sub = serviceSublayer(stack[j]);
      if (sub) return sub;
    }
    return 'service: own code';
  }
  for (let i = stack.length - 1; i >= 0; i--) {
    const k = kind(stack[i]);
    if (k) return k;
  }
  return 'other';
}

export interface LayerTable {
  busyUs: number;
  idleUs: number;
  layers: { layer: string; us: number; share: number }[];
  folded: Map<string, number>;
}

export function layersOf(profile: CpuProfile): LayerTable {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frames = new Map<number, Frame>();
  const frameOf = (id: number) => {
    let f = frames.get(id);
    if (!f) frames.set(id, (f = resolve(byId.get(id)!.callFrame)));
    return f;
  };
  const stacks = new Map<number, { layer: string; folded: string }>();
  const stackOf = (id: number) => {
    let s = stacks.get(id);
    if (!s) {
      const stack: Frame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = frameOf(at);
        if (f.name !== '(root)') stack.unshift(f);
      }
      const label = (f: Frame) => (f.source ? `${f.name} ${f.source}:${f.line}` : f.name).replace(/;/g, ',');
      s = { layer: layerOf(stack), folded: stack.map(label).join(';') };
      stacks.set(id, s);
    }
    return s;
  };
  const us = new Map<string, number>();
  const folded = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  // Only the time between the first and the last sample of a merchant request (the auth hook):
  // not the server's start-up (module loading, compiling) or shutdown.
  const inRequest = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (frameOf(at).source === 'src/http/auth.ts') return true;
    return false;
  };
  let first = profile.samples.findIndex(inRequest);
  let last = profile.samples.length - 1;
  while (last >= 0 && !inRequest(profile.samples[last])) last--;
  if (first < 0) [first, last] = [0, profile.samples.length - 1];
  profile.samples.forEach((id, i) => {
    if (i < first || i > last) return;
    const dt = profile.timeDeltas[i] ?? 0;
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      idleUs += dt;
      return;
    }
    busyUs += dt;
    const { layer, folded: key } = stackOf(id);
    us.set(layer, (us.get(layer) ?? 0) + dt);
    const withLayer = `[${layer}];${key}`;
    folded.set(withLayer, (folded.get(withLayer) ?? 0) + dt);
  });
  const layers = [...us].map(([layer, t]) => ({ layer, us: t, share: t / busyUs })).sort((a, b) => b.us - a.us);
  return { busyUs, idleUs, layers, folded };
}

if (import.meta.filename === path.resolve(process.argv[1] ?? '')) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'cpu-us': { type: 'string' },
      svg: { type: 'string' },
      title: { type: 'string' },
      json: { type: 'boolean', default: false },
      dist: { type: 'string' },
    },
  });
  if (values.dist) distDir = path.resolve(values.dist);
  const file = positionals[0];
  if (!file) throw new Error('usage: profile-layers.ts <file.cpuprofile> [--cpu-us N] [--svg out.svg] [--title T] [--json]');
  const table = layersOf(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
  const cpuUs = values['cpu-us'] ? Number(values['cpu-us']) : null;
  if (values.svg) {
    fs.writeFileSync(values.svg, flameGraphSvg(table.folded, { title: values.title ?? path.basename(file) }));
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ busyUs: table.busyUs, idleUs: table.idleUs, cpuUsPerRequest: cpuUs, layers: table.layers }, null, 2)}\n`);
  } else {
    process.stdout.write(`busy ${(table.busyUs / 1e6).toFixed(2)} s, idle ${(table.idleUs / 1e6).toFixed(2)} s\n\n`);
    process.stdout.write(`| layer | share of busy CPU |${cpuUs ? ' µs per request |' : ''}\n|---|---:|${cpuUs ? '---:|' : ''}\n`);
    for (const l of table.layers) {
      process.stdout.write(`| ${l.layer} | ${(100 * l.share).toFixed(1)} % |${cpuUs ? ` ${Math.round(l.share * cpuUs)} |` : ''}\n`);
    }
  }
}
