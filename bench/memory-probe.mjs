/**
 * Preloaded into a server (`node --import ./bench/memory-probe.mjs bin/stockist.js serve …`, with
 * BENCH_MEMORY_FILE set) by bench/idle-memory.mjs: on SIGUSR2 it runs a full collection and writes
 * the process's memory split to that file as JSON — `process.memoryUsage()`, V8's code and source
 * sizes (`v8.getHeapCodeStatistics()`), its heap spaces, and /proc/self/status's VmRSS, RssAnon,
 * RssFile, VmHWM and thread count — so one reading names where the resident megabytes are. It also
 * splits the anonymous memory by mapping (/proc/self/smaps): glibc's main heap (`[heap]`), its
 * other arenas and the rest, with the MALLOC_* variables the process runs with.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

const file = process.env.BENCH_MEMORY_FILE;
if (file) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const mb = (bytes) => Math.round(bytes / 1024 / 10.24) / 100;
  process.on('SIGUSR2', () => {
    gc();
    gc();
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    const usage = process.memoryUsage();
    const code = v8.getHeapCodeStatistics();
    const reading = {
      vmRss: kb('VmRSS') / 1024,
      rssAnon: kb('RssAnon') / 1024,
      rssFile: kb('RssFile') / 1024,
      vmHwm: kb('VmHWM') / 1024,
      threads: kb('Threads'),
      heapTotal: mb(usage.heapTotal),
      heapUsed: mb(usage.heapUsed),
      external: mb(usage.external),
      arrayBuffers: mb(usage.arrayBuffers),
      code: mb(code.code_and_metadata_size),
      bytecode: mb(code.bytecode_and_metadata_size),
      source: mb(code.external_script_source_size),
      anon: anonymousSplit(),
      malloc: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_') || k === 'STOCKIST_MALLOC_TUNED')),
      spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mb(s.space_used_size)])),
    };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(reading));
    fs.renameSync(`${file}.tmp`, file);
    if (process.env.BENCH_HEAP_SNAPSHOT) v8.writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
  });
}

/**
 * Resident anonymous MB by kind of mapping: `[heap]` (glibc's main arena), glibc's other arenas
 * (each a 64 MB-aligned reservation of 64 MB: a read-write part, then the unused rest `---p`), the rest.
 */
function anonymousSplit() {
  const ARENA = 64 * 1024 * 1024;
  const maps = [];
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3], name: head[4].trim(), rssKb: 0 });
    else if (line.startsWith('Rss:') && maps.length > 0) maps.at(-1).rssKb = Number(line.split(/\s+/)[1]);
  }
  const split = { heap: 0, arenas: 0, arenaCount: 0, other: 0 };
  maps.forEach((m, i) => {
    if (m.name === '[heap]') split.heap += m.rssKb;
    else if (m.name !== '') return;
    else {
      const next = maps[i + 1];
      const reservedEnd = next && next.start === m.end && next.perms.startsWith('---') && next.name === '' ? next.end : m.end;
      if (m.perms.startsWith('rw') && m.start % BigInt(ARENA) === 0n && reservedEnd - m.start === BigInt(ARENA)) {
        split.arenas += m.rssKb;
        split.arenaCount += 1;
      } else split.other += m.rssKb;
    }
  });
  for (const k of ['heap', 'arenas', 'other']) split[k] = Math.round(split[k] / 102.4) / 10;
  return split;
}
