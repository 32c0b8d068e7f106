import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { Type } from 'typebox';
import { lazySerializers, nullableForSerializer } from '../../src/http/validation.ts';
import { Instant, MerchantResponses, Nullable, StringEnum } from '../../src/schemas/common.ts';
import { OrderPage } from '../../src/schemas/orders.ts';

type Route = Parameters<ReturnType<ReturnType<typeof lazySerializers>>>[0];
const route = (schema: unknown) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' }) as Route;
const asWritten = (schema: unknown) => SerializerSelector()(undefined as never, undefined as never)(route(schema));
const asServed = (schema: unknown) => lazySerializers(true)(undefined as never, undefined as never)(route(schema));

describe('response serializers: "this or null" without a schema validator', () => {
  it('turns a union with null into the schema itself, nullable; every other union is left as written', () => {
    const schema = Type.Object({
      at: Nullable(Instant(), { description: 'when' }),
      status: Nullable(StringEnum(['a', 'b'])),
      address: Nullable(Type.Object({ city: Nullable(Type.String()) })),
      either: Type.Union([Type.String(), Type.Integer()]),
    });
    const out = nullableForSerializer(schema) as { properties: Record<string, Record<string, unknown>> };
    assert.deepEqual(out.properties.at, { type: 'string', format: 'date-time', description: 'when', nullable: true });
    assert.deepEqual(out.properties.status, { type: 'string', enum: ['a', 'b'], nullable: true });
    assert.equal(out.properties.address.nullable, true);
    assert.deepEqual((out.properties.address.properties as Record<string, unknown>).city, { type: 'string', nullable: true });
    assert.equal(out.properties.either.anyOf !== undefined, true);
    assert.equal((schema.properties.at as { anyOf?: unknown }).anyOf !== undefined, true, 'the route schema itself is not changed');
  });

  it('writes ten orders byte for byte as the schema as written does, and still drops fields it does not list', () => {
    const schema = MerchantResponses(OrderPage)[200];
    let n = 0;
    // A value for every field: every third nullable one null, times as the API writes them.
    const make = (s: Record<string, unknown>): unknown => {
      if (Array.isArray(s.anyOf)) return ++n % 3 === 0 ? null : make(s.anyOf.find((o) => o.type !== 'null'));
      if (Array.isArray(s.enum)) return s.enum[n++ % s.enum.length];
      switch (s.type) {
        case 'object':
          return Object.fromEntries(Object.entries((s.properties ?? {}) as Record<string, Record<string, unknown>>).map(([k, v]) => [k, make(v)]));
        case 'array':
          return [make(s.items as Record<string, unknown>), make(s.items as Record<string, unknown>)];
        case 'string':
          return s.format === 'date-time' ? `2026-12-0${(n++ % 9) + 1}T10:00:00Z` : s.pattern ? String(1000 + n++) : `text ${n++} "quoted"`;
        case 'integer':
          return n++;
        case 'number':
          return n++ + 0.25;
        case 'boolean':
          return n++ % 2 === 0;
        default:
          return null;
      }
    };
    const data = make(OrderPage as never) as { list: Record<string, unknown>[] };
    data.list = Array.from({ length: 10 }, () => ({ ...(make(OrderPage.properties.list.items as never) as object), secret: 'not listed' }));
    const doc = { code: 200, message: 'ok', data, requestId: 'r-1' };
    const served = asServed(schema)(doc);
    assert.equal(served, asWritten(schema)(doc));
    assert.ok(served.includes('null') && served.includes('2026-12-0'), 'the document has nulls and times in it');
    assert.equal(served.includes('not listed'), false);
  });

  it('writes a nullable object as null or as its listed fields', () => {
    const schema = Type.Object({ address: Nullable(Type.Object({ city: Type.String() })) });
    assert.equal(asServed(schema)({ address: null }), '{"address":null}');
    assert.equal(asServed(schema)({ address: { city: 'Oslo', extra: 1 } }), '{"address":{"city":"Oslo"}}');
  });
});
