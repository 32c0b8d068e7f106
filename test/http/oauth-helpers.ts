import type { TestApp } from '../helpers.ts';

type Params = Record<string, string>;

/** RFC 6749 requests are form-encoded. */
export const form = (params: Params) => new URLSearchParams(params).toString();
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A token request: form-encoded by default, JSON with `json: true`. */
export async function tokenRequest(t: TestApp, params: Params, options: { json?: boolean; authorization?: string; url?: string } = {}) {
  const r = await t.app.inject({
    method: 'POST',
    url: options.url ?? '/openapi/oauth/token',
    payload: options.json ? params : form(params),
    headers: {
      'content-type': options.json ? 'application/json' : 'application/x-www-form-urlencoded',
      ...(options.authorization ? { authorization: options.authorization } : {}),
    },
  });
  return { status: r.statusCode, headers: r.headers, body: r.json() as Record<string, any> };
}
