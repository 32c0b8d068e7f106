import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fillForm, KEPT_TEXT_LIMIT, keptFields } from '../../src/web/kept-forms.ts';

const PAGE = `<main>
<form method="post" action="/console/other"><input name="name" value="other"></form>
<form method="post" action="/console/merchants/5/terms?x=1&amp;y=2">
  <input type="hidden" name="_csrf" value="fresh">
  <input type="hidden" name="version" value="7">
  <input id="n" name="name" required value="">
  <input name="line" value=""><input name="line" value="">
  <textarea name="note" rows="3">old</textarea>
  <select name="mode"><option value="prepaid" selected>Prepaid</option><option value="credit">Credit</option></select>
  <label><input type="checkbox" name="scopes" value="a" checked> a</label>
  <label><input type="checkbox" name="scopes" value="b"> b</label>
  <input type="password" name="pin" value="">
  <button type="submit">Save</button>
</form></main>`;

describe('kept forms (Front ends III, 3)', () => {
  it('keeps text fields, never passwords, codes, tokens or the CSRF token', () => {
    assert.deepEqual(
      keptFields({
        _csrf: 'c',
        _formKey: 'k',
        name: 'Shop',
        scopes: ['a', 'b'],
        password: 'p',
        confirm: 'p',
        current: 'p',
        code: '123456',
        newPassword: 'p',
        clientSecret: 's',
        token: 't',
        recoveryCode: 'r',
        odd: { not: 'text' },
      }),
      { name: 'Shop', scopes: ['a', 'b'] },
    );
    // A pasted file is not kept (a quarter of the limit per field); the rest of the form is.
    assert.deepEqual(keptFields({ fileText: 'x'.repeat(KEPT_TEXT_LIMIT / 4), note: 'kept' }), { note: 'kept' });
  });

  it('fills the form posting to the action: inputs, repeated names in order, textarea, select, checkboxes; escapes what it writes', () => {
    const { html, filled } = fillForm(PAGE, '/console/merchants/5/terms?x=1&y=2', {
      version: '6',
      name: 'A "quoted" <name> & co',
      line: ['one', 'two'],
      note: 'new </textarea><script>',
      mode: 'credit',
      scopes: ['b'],
      pin: 'never',
    });
    assert.equal(filled, true);
    assert.match(html, /<input name="name" value="other">/, 'another form untouched');
    assert.match(html, /name="_csrf" value="fresh"/, 'the page’s own token stays');
    assert.match(html, /name="version" value="6"/, 'the version it was edited against (an edit conflict is then found)');
    assert.match(html, /name="name" required value="A &#34;quoted&#34; &#60;name&#62; &#38; co"/);
    assert.match(html, /name="line" value="one"><input name="line" value="two">/);
    assert.match(html, /<textarea name="note" rows="3">new &#60;\/textarea&#62;&#60;script&#62;<\/textarea>/);
    assert.match(html, /<option value="prepaid">Prepaid<\/option><option value="credit" selected>Credit/);
    assert.match(html, /name="scopes" value="a">/);
    assert.match(html, /name="scopes" value="b" checked>/);
    assert.match(html, /type="password" name="pin" value=""/, 'a password field is never filled');
  });

  it('a page without the form is left as it is', () => {
    assert.deepEqual(fillForm(PAGE, '/console/gone', { name: 'x' }), { html: PAGE, filled: false });
  });
});
