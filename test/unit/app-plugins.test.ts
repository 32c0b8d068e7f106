import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import {
  PLUGIN,
  credentialsPlugin,
  envelopePlugin,
  rateBucketsPlugin,
  requestRulesPlugin,
  usagePlugin,
  routeListPlugin,
} from '../../src/plugins/foundation.ts';
import { docsPlugin, merchantApiPlugin, operatorApiPlugin } from '../../src/plugins/surfaces.ts';
import { freshStore, testConfig } from '../helpers.ts';

/** Issue 30, item 4: the app's parts declare what they need, and Fastify refuses them out of order. */
describe('the app is built from plugins that declare their dependencies', () => {
  it('a part registered before a plugin it depends on fails at start-up, naming it', async () => {
    const app = Fastify();
    const config = testConfig();
    await app.register(envelopePlugin);
    await app.register(requestRulesPlugin, { config });
    // The operator API needs the credentials plugin (its token cache), not registered yet.
    await assert.rejects(
      async () => {
        await app.register(operatorApiPlugin, { store: null as never, config, adminApiKey: 'k' });
      },
      (error: Error & { code?: string }) =>
        error.code === 'FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE' && /'tokenCache' required by 'stockist-operator-api'/.test(error.message),
    );
    await app.close().catch(() => {});
  });

  it('the request rules need the envelope first', async () => {
    const app = Fastify();
    await assert.rejects(
      async () => {
        await app.register(requestRulesPlugin, { config: testConfig() });
      },
      (error: Error & { code?: string }) =>
        error.code === 'FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE' && /'errorCode' required by 'stockist-request-rules'/.test(error.message),
    );
    await app.close().catch(() => {});
  });

  it('the references come after the APIs they describe', async () => {
    const app = Fastify();
    await app.register(routeListPlugin);
    await app.register(envelopePlugin);
    await app.register(requestRulesPlugin, { config: testConfig() });
    await assert.rejects(
      async () => {
        await app.register(docsPlugin([PLUGIN.merchantApi]), { merchant: true, admin: false });
      },
      (error: Error & { code?: string }) =>
        error.code === 'FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED' && /stockist-merchant-api/.test(error.message) && /stockist-docs/.test(error.message),
    );
    await app.close().catch(() => {});
  });

  it('in order, the merchant API registers', async (t) => {
    const { store, drop } = await freshStore('sqlite');
    t.after(drop);
    const config = testConfig();
    const app = Fastify();
    t.after(() => app.close());
    await app.register(envelopePlugin);
    await app.register(requestRulesPlugin, { config });
    await app.register(rateBucketsPlugin, { config });
    await app.register(credentialsPlugin, { config, store });
    await app.register(usagePlugin, { config, store, enabled: false });
    await app.register(merchantApiPlugin, { store, config });
    await app.ready();
    assert.ok(app.hasRoute({ method: 'GET', url: '/openapi/v1/product/stocks' }));
  });
});
