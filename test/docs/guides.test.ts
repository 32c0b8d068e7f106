import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OrderRecord, SplitOrderRecord } from '../../src/schemas/orders.ts';
import { REFUND_STATES } from '../../src/domain/vocabulary.ts';
import { useApp } from '../helpers.ts';

const read = (file: string) => fs.readFileSync(path.resolve(import.meta.dirname, '../..', file), 'utf8');
const enumOf = (schema: unknown): string[] => {
  const s = schema as { enum?: string[]; anyOf?: { enum?: string[] }[] };
  return s.enum ?? s.anyOf?.flatMap((x) => x.enum ?? []) ?? [];
};

describe('operator guide and state diagrams', () => {
  const registered: string[] = [];
  useApp('sqlite', {}, { onRoute: (r) => registered.push(...[r.method].flat().map((m) => `${m} ${r.url ?? ''}`)) });

  it('the operator guide names every operator API route', () => {
    const guide = read('docs/operator-guide.md');
    const admin = registered.filter((r) => r.includes(' /admin/v1/') && !r.startsWith('HEAD'));
    assert.ok(admin.length >= 20);
    for (const route of admin) {
      const [method, url] = route.split(' ');
      const documented = url.slice('/admin/v1'.length).replace(/:([A-Za-z]+)/g, '{$1}');
      assert.ok(guide.includes(`${method} ${documented}`), `${method} ${documented} is in docs/operator-guide.md`);
    }
  });

  it('the state diagrams show every order, split order and refund state', () => {
    const states = read('docs/states.md');
    assert.match(states, /```mermaid\nstateDiagram-v2/);
    const props = OrderRecord.properties as Record<string, unknown>;
    const all = [
      ...enumOf(props.status),
      ...enumOf(props.fulfillmentStatus),
      ...enumOf(props.refundStatus),
      ...enumOf((SplitOrderRecord.properties as Record<string, unknown>).status),
      ...REFUND_STATES,
    ];
    assert.ok(all.length >= 14);
    for (const state of all) assert.match(states, new RegExp(`\\b${state}\\b`), `${state} is drawn in docs/states.md`);
  });
});
