import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spreadsheetSafe } from '../../src/domain/csv.ts';

/** OWASP "CSV Injection": a cell a spreadsheet would run as a formula is shown as text instead. */
describe('spreadsheetSafe', () => {
  it('prefixes text starting with = + - @ tab CR, or their full-width forms, with a quote', () => {
    for (const text of ['=1+2', '+SUM(A1)', '-2+3', '@cmd', '\tx', '\rx', '＝1+2', '＋1', '－1', '＠x', '-', '=HYPERLINK("http://x","y")'])
      assert.equal(spreadsheetSafe(text), `'${text}`, JSON.stringify(text));
  });

  it('leaves other text and plain numbers (negative amounts) as they are', () => {
    for (const text of ['Shop', '', ' =x', "'quoted", '12.50', '-12.50', '-7', 'a=b', '1+1']) assert.equal(spreadsheetSafe(text), text, JSON.stringify(text));
  });
});
