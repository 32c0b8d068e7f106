import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, newMerchant, useApp } from '../helpers.ts';
import { signedIn as consoleSignedIn, staff } from './console-client.ts';
import { follow, member } from './manager-helpers.ts';

/**
 * Issue 29, item 16: the audit pages are readable — who acted by email (joined in the store), the
 * time as every other time (item 8), and the change as a list of fields, not JSON with epoch ms.
 * The business manager names its own team by email and the operator's people only as "the operator".
 */

/** Each row of an audit page: its action, who, and the change as text (tags dropped, fields joined by "; "). */
function auditRows(html: string) {
  return [...html.matchAll(/<tr data-audit="([^"]+)"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => {
    const cell = (name: string) => {
      const found = new RegExp(`<td[^>]*data-${name}[^>]*>([\\s\\S]*?)</td>`).exec(m[2]);
      return found
        ? found[1]
            .replace(/<\/li>/g, '; ')
            .replace(/<[^>]+>/g, '')
            .replace(/\s+/g, ' ')
            .replace(/;\s*$/, '')
            .trim()
        : null;
    };
    return { action: /data-action="([^"]+)"/.exec(m[0])?.[1] ?? m[1], actor: cell('actor'), change: cell('change'), html: m[2] };
  });
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`audit pages: actors by email, changes as fields (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);

    it('the console names staff and merchant users by email and lists each change field by field', async () => {
      await staff(t, 'audit-owner@example.com', 'owner');
      const owner = await consoleSignedIn(t, 'audit-owner@example.com');
      const m = await newMerchant(t, 'Audit shop');
      const admin = await member(t, m.merchantId, 'audit-admin@shop.example', 'admin');
      const invited = await follow(
        admin,
        await admin.post('/manager/team/invitations', { _csrf: await admin.csrf('/manager/team'), email: 'later@shop.example', role: 'viewer' }),
      );
      assert.equal(invited.statusCode, 200, invited.body);
      const disabled = await owner.post(`/console/merchants/${m.merchantId}/disable`, { _csrf: await owner.csrf() });
      assert.ok(disabled.statusCode < 400, disabled.body);
      assert.equal(
        (await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount: 12.5, reference: 'BANK-7' })).status,
        200,
      );

      const page = await owner.get('/console/audit');
      assert.equal(page.statusCode, 200);
      const rows = auditRows(page.body);
      const disable = rows.find((r) => r.html.includes('merchant.disable'))!;
      assert.equal(disable.actor, 'audit-owner@example.com (staff)');
      assert.match(disable.change!, /status: Active → Disabled/);
      const invite = rows.find((r) => r.html.includes('merchant_user.invite'))!;
      assert.equal(invite.actor, 'audit-admin@shop.example (user of Audit shop)', 'a business manager user: by email, with their merchant');
      // The invitation's expiry was recorded as epoch ms: shown as a time, in the one format.
      assert.match(
        invite.html,
        /<li data-field="expiresAt"><span class="field">expires at<\/span>: <time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" title="[^"]+ UTC">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time><\/li>/,
      );
      const topUp = rows.find((r) => r.html.includes('account.top_up'))!;
      assert.match(
        topUp.actor!,
        /^the operator API admin_key:key_/,
        'the operator API has no email: its kind in words, then kind and id as the filter takes them',
      );
      assert.match(topUp.change!, /balance: 0\.00 → 12\.50/);
      assert.match(topUp.change!, /amount: 12\.50/);
      const table = /<table class="queue stacked" id="audit-log" role="table">[\s\S]*?<\/table>/.exec(page.body)![0];
      assert.doesNotMatch(table.replace(/<time [^>]+>/g, '<time>'), /\{&#34;|\{"|\{&quot;|\d{13}/, 'no JSON and no epoch milliseconds in the log');
      assert.match(page.body, /<time datetime="[^"]+Z" title="[^"]+ UTC">/);
    });

    it('the business manager shows its own rows only: its team by email, the operator’s people as "the operator"', async () => {
      await staff(t, 'audit-owner2@example.com', 'owner');
      const owner = await consoleSignedIn(t, 'audit-owner2@example.com');
      const m = await newMerchant(t, 'Audit shop two');
      const other = await newMerchant(t, 'Audit other shop');
      const admin = await member(t, m.merchantId, 'two-admin@shop.example', 'admin');
      const viewer = await member(t, m.merchantId, 'two-viewer@shop.example', 'viewer');
      await member(t, other.merchantId, 'other-admin@shop.example', 'admin');
      assert.ok((await owner.post(`/console/merchants/${m.merchantId}/disable`, { _csrf: await owner.csrf() })).statusCode < 400);
      assert.ok((await owner.post(`/console/merchants/${m.merchantId}/enable`, { _csrf: await owner.csrf() })).statusCode < 400);
      const teamToken = await admin.csrf('/manager/team');
      const rows0 = await t.store.db.selectFrom('merchant_users').select(['id', 'email_key']).where('merchant_id', '=', Number(m.merchantId)).execute();
      const viewerId = rows0.find((r) => r.email_key === 'two-viewer@shop.example')!.id;
      assert.equal((await admin.post(`/manager/team/${viewerId}/role`, { _csrf: teamToken, role: 'developer' })).statusCode, 303);

      const page = await admin.get('/manager/audit');
      assert.equal(page.statusCode, 200);
      const rows = auditRows(page.body);
      const role = rows.find((r) => r.action === 'merchant_user.change_role')!;
      assert.equal(role.actor, 'two-admin@shop.example');
      assert.equal(role.change, 'role: viewer → developer');
      const enable = rows.find((r) => r.action === 'merchant.enable')!;
      assert.equal(enable.actor, 'the operator');
      assert.match(enable.change!, /status: Disabled → Active/);
      assert.doesNotMatch(page.body, /audit-owner2@example\.com/, "the operator's staff addresses are not shown to merchants");
      assert.doesNotMatch(page.body, /other-admin@shop\.example|Audit other shop/, "another merchant's rows are not here");
      assert.equal((await viewer.get('/manager/audit')).statusCode, 403, 'the audit log is for admins');
    });
  });
}
