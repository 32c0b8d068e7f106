import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRequest, WebhookResponse, WebhookSender } from '../../src/jobs/webhook-sender.ts';
import { checkWebhookBody } from '../contract.ts';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A real receiver on 127.0.0.1 (random port). `respond` decides each answer from the request and
 * how many came before it; default 200.
 */
export async function startReceiver(respond: (r: Received, n: number, res: http.ServerResponse) => number | 'hang' | 'handled' = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      const answer = respond(r, received.length - 1, res);
      if (answer === 'hang' || answer === 'handled') return;
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 400 ? 'receiver says no' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A scripted sender: records every request and answers with `respond` (throw to simulate a network
 * error). Bodies that do not match the document's `webhooks` schemas are collected in `problems`.
 */
export function fakeSender(
  respond: (r: WebhookRequest, n: number) => number = () => 200,
): WebhookSender & { sent: (WebhookRequest & { type: string; orderId: string })[]; problems: string[] } {
  const sent: (WebhookRequest & { type: string; orderId: string })[] = [];
  const problems: string[] = [];
  return {
    sent,
    problems,
    async send(r): Promise<WebhookResponse> {
      const body = JSON.parse(r.body);
      const problem = checkWebhookBody(r.body);
      if (problem) problems.push(problem);
      sent.push({ ...r, type: body.type, orderId: body.data.orderId });
      return { status: respond(r, sent.length - 1), body: '' };
    },
    close() {},
  };
}
