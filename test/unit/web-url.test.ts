import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { webUrlProblem } from '../../src/domain/web-url.ts';

describe('webUrlProblem: the one rule for stored links (issue 44, 13)', () => {
  it('takes an absolute URL of the allowed schemes', () => {
    for (const url of ['https://img.example/a.jpg', 'http://img.example/a.jpg?x=1#y', 'HTTPS://IMG.EXAMPLE/A', 'https://img/a.jpg', 'https://[2001:db8::1]/a'])
      assert.equal(webUrlProblem(url, 'http(s)'), null, url);
    assert.equal(webUrlProblem('https://track.example/X', 'https'), null);
  });

  it('refuses every other scheme, relative forms, white space and control characters', () => {
    for (const url of [
      'javascript:alert(1)',
      ' javascript:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>1</script>',
      'vbscript:x',
      'ftp://img.example/a',
      '//img.example/a.jpg',
      '/a.jpg',
      'img.example/a.jpg',
      'https:img.example',
      'https:/img.example',
      'https://',
      'https://img.example/a b',
      'https://img.example/a\nb',
      '',
    ])
      assert.equal(webUrlProblem(url, 'http(s)'), 'must be an absolute http:// or https:// URL', JSON.stringify(url));
    assert.equal(webUrlProblem('http://track.example/X', 'https'), 'must be an absolute https:// URL');
  });
});
