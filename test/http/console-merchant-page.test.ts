import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditAction } from '../../src/domain/audit.ts';
import { createClient, revokeClient } from '../../src/services/credentials.service.ts';
import { forMerchant } from '../../src/store/tenancy.ts';
import { DIALECTS, PG_SKIP, buildTestApp, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
import { follow, signedIn, staff } from './console-client.ts';
import { enrol, invite, member, signedIn as managerSignedIn } from './manager-helpers.ts';

/**
 * Issue 29, item 12: the console's merchant page lists the merchant's business manager users and
 * pending invitations (cancel, resend, remove, reset two-factor), its OAuth clients and tokens with
 * their state, and creating a merchant under a name in use warns and asks to confirm.
 */

const CLI = { kind: 'cli', id: 'test', requestId: null } as const;

async function build(c: { after(fn: () => Promise<void>): void }, dialect: 'sqlite' | 'postgres') {
  const t: TestApp = await buildTestApp(c, dialect);
  await staff(t, 'owner@example.com', 'owner');
  await staff(t, 'support@example.com', 'support');
  await staff(t, 'warehouse@example.com', 'warehouse');
  const shop = await newMerchant(t, 'Page Shop');
  const other = await newMerchant(t, 'Other Shop');
  return {
    t,
    shop,
    other,
    owner: await signedIn(t, 'owner@example.com'),
    support: await signedIn(t, 'support@example.com'),
    warehouse: await signedIn(t, 'warehouse@example.com'),
  };
}

const csrfOf = (html: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(html)![1];
const formKeyOf = (html: string, suffix: string) => new RegExp(`name="_formKey" value="([A-Za-z0-9_-]+-${suffix})"`).exec(html)?.[1];
const userIdOf = async (t: TestApp, email: string) =>
  String((await t.store.db.selectFrom('merchant_users').select('id').where('email_key', '=', email).executeTakeFirstOrThrow()).id);
const invitationIdOf = async (t: TestApp, email: string) =>
  String(
    (
      await t.store.db
        .selectFrom('merchant_invitations')
        .select('id')
        .where('email_key', '=', email)
        .where('revoked_at', 'is', null)
        .where('accepted_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).id,
  );
const staffAudit = async (t: TestApp, action: AuditAction) =>
  t.store.db.selectFrom('audit_log').select(['actor_kind', 'actor_id', 'target', 'merchant_id']).where('action', '=', action).execute();
const staffIdOf = async (t: TestApp, email: string) =>
  String((await t.store.db.selectFrom('staff_users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console merchant page: users, invitations, clients, tokens (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('lists users, pending invitations, every OAuth client (a revoked one marked revoked) and tokens with their state, to owner and support', async (c) => {
      const { t, shop, owner, support, warehouse } = await build(c, dialect);
      await member(t, shop.merchantId, 'admin@page.example', 'admin');
      await invite(t, shop.merchantId, 'pending@page.example', 'viewer');
      const kept = await createClient(forMerchant(t.store.db, Number(shop.merchantId)), CLI, 'Warehouse sync', Date.now());
      const gone = await createClient(forMerchant(t.store.db, Number(shop.merchantId)), CLI, 'Old plugin', Date.now());
      await revokeClient(forMerchant(t.store.db, Number(shop.merchantId)), CLI, gone.client.id, Date.now());
      const url = `/console/merchants/${shop.merchantId}`;
      for (const b of [owner, support]) {
        const page = await b.get(url);
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /<tr data-user="\d+"><td>admin@page\.example<\/td><td>admin<\/td><td data-field="two-factor">off<\/td>/);
        assert.match(page.body, /<tr data-invitation="\d+"><td>pending@page\.example<\/td><td>viewer<\/td>/);
        assert.match(page.body, new RegExp(`data-client="${kept.client.id}">.*?data-state="active"`, 's'));
        assert.match(page.body, new RegExp(`data-client="${gone.client.id}"><td>Old plugin</td>.*?data-state="revoked">Revoked`, 's'));
        assert.match(page.body, new RegExp(`data-token="${shop.tokenId}">.*?data-state="active"`, 's'));
        assert.doesNotMatch(page.body, /sks_/, 'no client secret is ever shown again');
      }
      const ownerPage = (await owner.get(url)).body;
      for (const action of ['remove-user', 'resend-invitation', 'cancel-invitation'])
        assert.match(ownerPage, new RegExp(`data-action="${action}"`), `owners see ${action}`);
      assert.doesNotMatch(ownerPage, /data-action="reset-two-factor"/, 'no two-factor to reset yet');
      const supportPage = (await support.get(url)).body;
      assert.doesNotMatch(supportPage, /data-action="(remove-user|resend-invitation|cancel-invitation|reset-two-factor)"/, 'support reads only');
      assert.equal((await warehouse.get(url)).statusCode, 403);
    });

    it('cancels and resends an invitation (a fresh link shown once, the old one dead), audited as the staff member', async (c) => {
      const { t, shop, owner } = await build(c, dialect);
      const oldLink = await invite(t, shop.merchantId, 'pending@page.example', 'developer');
      const url = `/console/merchants/${shop.merchantId}`;
      const page = (await owner.get(url)).body;
      const invitationId = await invitationIdOf(t, 'pending@page.example');
      const resendKey = formKeyOf(page, `resend-${invitationId}`);
      assert.ok(resendKey, 'the resend form carries a one-time key');
      const fields = { _csrf: csrfOf(page), _formKey: resendKey };
      const resent = await owner.post(`${url}/invitations/${invitationId}/resend`, fields);
      const shown = await follow(owner, resent);
      assert.match(shown.body, /New invitation link for pending@page\.example/);
      const link = /(\/manager\/invitations\/[A-Za-z0-9]{43})/.exec(shown.body)?.[1];
      assert.ok(link, 'the new link is shown');
      assert.notEqual(link, oldLink);
      assert.doesNotMatch((await owner.get(url)).body, /New invitation link/, 'shown once');
      assert.equal((await t.app.inject({ method: 'GET', url: oldLink })).statusCode, 404, 'the old link stops working');
      assert.equal((await t.app.inject({ method: 'GET', url: link })).statusCode, 200, 'the new one works');
      // A double click: the same key applies nothing more.
      const again = await owner.post(`${url}/invitations/${invitationId}/resend`, fields);
      assert.equal(again.statusCode, 303);
      assert.equal((await t.store.db.selectFrom('merchant_invitations').select('id').where('email_key', '=', 'pending@page.example').execute()).length, 2);
      const newId = await invitationIdOf(t, 'pending@page.example');
      const cancel = await owner.post(`${url}/invitations/${newId}/cancel`, { _csrf: fields._csrf });
      assert.match((await follow(owner, cancel)).body, /Invitation of pending@page\.example cancelled/);
      assert.equal((await t.app.inject({ method: 'GET', url: link })).statusCode, 404, 'the cancelled link stops working');
      assert.doesNotMatch((await owner.get(url)).body, /data-invitation=/);
      const ownerId = await staffIdOf(t, 'owner@example.com');
      for (const action of ['merchant_user.invite', 'merchant_user.revoke_invitation'] as const) {
        const rows = (await staffAudit(t, action)).filter((r) => r.actor_kind === 'staff');
        assert.ok(rows.length >= 1, action);
        for (const r of rows) assert.deepEqual([r.actor_id, Number(r.merchant_id)], [ownerId, Number(shop.merchantId)]);
      }
    });

    it('removes a user and resets a user’s two-factor (sessions end, the next sign-in asks for the password only)', async (c) => {
      const { t, shop, owner } = await build(c, dialect);
      const admin = await member(t, shop.merchantId, 'admin@page.example', 'admin');
      await member(t, shop.merchantId, 'dev@page.example', 'developer');
      await enrol(admin, Date.now());
      const url = `/console/merchants/${shop.merchantId}`;
      const page = (await owner.get(url)).body;
      assert.match(page, /<td>admin@page\.example<\/td><td>admin<\/td><td data-field="two-factor">on<\/td>/);
      assert.match(page, /data-action="reset-two-factor"/);
      const csrf = csrfOf(page);
      const adminId = await userIdOf(t, 'admin@page.example');
      const reset = await owner.post(`${url}/users/${adminId}/reset-two-factor`, { _csrf: csrf });
      assert.match((await follow(owner, reset)).body, /Two-factor sign-in reset; 1 session signed out/);
      assert.equal((await admin.get('/manager')).statusCode, 303, 'the admin’s session ended');
      const back = await managerSignedIn(t, 'admin@page.example');
      const landed = await back.get('/manager');
      assert.equal(landed.statusCode, 200, 'signed in with the password alone');
      assert.match((await owner.get(url)).body, /<td>admin@page\.example<\/td><td>admin<\/td><td data-field="two-factor">off<\/td>/);
      const nothingToReset = await owner.post(`${url}/users/${adminId}/reset-two-factor`, { _csrf: csrf });
      assert.equal(nothingToReset.statusCode, 409);

      const devId = await userIdOf(t, 'dev@page.example');
      const removed = await owner.post(`${url}/users/${devId}/remove`, { _csrf: csrf });
      assert.match((await follow(owner, removed)).body, /User removed/);
      assert.doesNotMatch((await owner.get(url)).body, /dev@page\.example/);
      // The merchant keeps an admin.
      const only = await owner.post(`${url}/users/${adminId}/remove`, { _csrf: csrf });
      assert.equal(only.statusCode, 409);
      assert.match(only.body, /only admin/);
      const ownerId = await staffIdOf(t, 'owner@example.com');
      for (const action of ['merchant_user.reset_two_factor', 'merchant_user.remove'] as const)
        assert.deepEqual(
          (await staffAudit(t, action)).map((r) => [r.actor_kind, r.actor_id, r.target]),
          [['staff', ownerId, action === 'merchant_user.remove' ? 'merchant_user:dev@page.example' : 'merchant_user:admin@page.example']],
        );
    });

    it('finds nothing of another merchant through this merchant’s page: 404, nothing written', async (c) => {
      const { t, shop, other, owner } = await build(c, dialect);
      const theirs = await member(t, other.merchantId, 'theirs@other.example', 'admin');
      await enrol(theirs, Date.now());
      await member(t, other.merchantId, 'dev@other.example', 'developer');
      await invite(t, other.merchantId, 'pending@other.example', 'viewer');
      const csrf = await owner.csrf(`/console/merchants/${shop.merchantId}`);
      const userId = await userIdOf(t, 'dev@other.example');
      const adminId = await userIdOf(t, 'theirs@other.example');
      const invitationId = await invitationIdOf(t, 'pending@other.example');
      const mine = `/console/merchants/${shop.merchantId}`;
      for (const path of [
        `${mine}/users/${userId}/remove`,
        `${mine}/users/${adminId}/reset-two-factor`,
        `${mine}/invitations/${invitationId}/cancel`,
        `${mine}/invitations/${invitationId}/resend`,
        `/console/merchants/987654321/users/${userId}/remove`,
        `/console/merchants/987654321/invitations/${invitationId}/resend`,
      ]) {
        const before = await tableDigests(t.store);
        const r = await owner.post(path, { _csrf: csrf });
        assert.equal(r.statusCode, 404, `${path}: ${r.body.slice(0, 200)}`);
        assert.deepEqual(await tableDigests(t.store), before, `${path}: nothing written`);
      }
      assert.equal((await owner.get('/console/merchants/987654321')).statusCode, 404);
    });

    it('warns on a merchant name in use (trimmed, any case) and creates it only when confirmed', async (c) => {
      const { t, owner } = await build(c, dialect);
      const list = (await owner.get('/console/merchants')).body;
      const csrf = csrfOf(list);
      const before = await tableDigests(t.store);
      const warned = await owner.post('/console/merchants', { _csrf: csrf, name: '  page SHOP ' });
      assert.equal(warned.statusCode, 409);
      assert.match(warned.body, /data-warning="duplicate-name"/);
      assert.match(warned.body, /A merchant named <strong>page SHOP<\/strong> exists already/);
      assert.match(warned.body, /<a href="\/console\/merchants\/\d+">Page Shop<\/a>/);
      assert.match(warned.body, /name="confirmDuplicate" value="yes"/);
      assert.match(warned.body, /name="name" required value="page SHOP"/, 'what was typed (the form trims it)');
      assert.deepEqual(await tableDigests(t.store), before, 'warned: nothing written');
      const confirmed = await owner.post('/console/merchants', { _csrf: csrf, name: 'Page Shop', confirmDuplicate: 'yes' });
      const created = await follow(owner, confirmed);
      assert.match(created.body, /Merchant \d+ created/);
      assert.equal((await t.store.db.selectFrom('merchants').select('id').where('name', '=', 'Page Shop').execute()).length, 2);
      const fresh = await owner.post('/console/merchants', { _csrf: csrf, name: 'A new name' });
      assert.equal(fresh.statusCode, 303, 'a name not in use is created without asking');
    });
  });
}
