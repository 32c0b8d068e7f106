/**
 * `node bench/upload-load.mjs <origin> <token> <seconds> <uploaders> <bytes>`: the evidence-upload
 * scenario's uploads, in a process of their own so that the reads measured by bench/run.ts do not
 * share an event loop with them. Posts PNG-typed bodies of <bytes> to /openapi/v1/claims/files from
 * <uploaders> concurrent loops for <seconds>; prints `{"times": [ms…], "errors": n}`.
 */
const [origin, token, seconds, uploaders, bytes] = process.argv.slice(2);
// A PNG's signature, then filler: typed from its first bytes, streamed, stored.
const png = Buffer.alloc(Number(bytes), 0x5a);
Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
const end = Date.now() + Number(seconds) * 1000;
const times = [];
let errors = 0;
await Promise.all(
  Array.from({ length: Number(uploaders) }, async () => {
    while (Date.now() < end) {
      const started = process.hrtime.bigint();
      const r = await fetch(`${origin}/openapi/v1/claims/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
        body: png,
      });
      await r.arrayBuffer();
      if (r.status === 200) times.push(Number(process.hrtime.bigint() - started) / 1e6);
      else errors++;
    }
  }),
);
process.stdout.write(JSON.stringify({ times, errors }));
