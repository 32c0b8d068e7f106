import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedAddress } from '../domain/webhook-url.ts';

export interface WebhookRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  /** The body's UTF-8 bytes, when the caller keeps them (one stock.changed body goes to many endpoints: encoded once). */
  bytes?: Buffer;
  /** The address the URL's host was resolved and checked to: the connection goes there and nowhere else. */
  address: ResolvedAddress;
  timeoutMs: number;
  /** Response bytes read at most; the rest is dropped (a receiver cannot make us buffer much). */
  maxResponseBytes: number;
}

export interface WebhookResponse {
  status: number;
  /** The start of the response body (at most `maxResponseBytes`). */
  body: string;
}

/** Sends one attempt; rejects on network errors and timeouts. Injectable so tests can script receivers. */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
  close(): void;
}

/**
 * The real sender, on node:http(s). The host's DNS answer was checked by the caller; `lookup` is
 * pinned to that checked address, so a second resolution (DNS rebinding) cannot send the request
 * elsewhere, while TLS still verifies the certificate against the host name (SNI and checks use
 * the URL's host). Redirects are never followed (node:http does not), and a 3xx counts as a failure.
 */
export function httpSender(): WebhookSender {
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 32 }), https: new https.Agent({ keepAlive: true, maxSockets: 32 }) };
  return {
    send: (request) =>
      new Promise<WebhookResponse>((resolve, reject) => {
        const { url, address } = request;
        const body = request.bytes ?? Buffer.from(request.body, 'utf8');
        const pinned: LookupFunction = (_hostname, options, callback) => {
          if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
          else callback(null, address.address, address.family);
        };
        const secure = url.protocol === 'https:';
        const req = (secure ? https : http).request(url, {
          method: 'POST',
          agent: secure ? agents.https : agents.http,
          lookup: pinned,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Stockist-Webhooks/1',
            'content-length': String(body.length),
            ...request.headers,
          },
        });
        const timer = setTimeout(() => req.destroy(new Error(`timed out after ${request.timeoutMs / 1000} s`)), request.timeoutMs);
        req.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
          };
          res.on('data', (chunk: Buffer) => {
            if (size >= request.maxResponseBytes) return;
            chunks.push(chunk.subarray(0, request.maxResponseBytes - size));
            size += chunk.length;
            // Enough read: stop downloading and drop the connection instead of draining it.
            if (size >= request.maxResponseBytes) {
              res.destroy();
              done();
            }
          });
          res.on('end', done);
          res.on('error', (error) => {
            clearTimeout(timer);
            reject(error);
          });
        });
        req.end(body);
      }),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
