import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { formatStatementAmount, statementSummary } from '../../src/domain/ledger.ts';
import { loadConfig } from '../../src/config.ts';
import { fontFile, printable, StatementText, type TextCanvas } from '../../src/services/statement-text.ts';

/** A stand-in for pdfkit's document: notes each run drawn (face, text, x) in drawing order. */
function recorder() {
  const runs: { face: string; text: string; x: number; y: number }[] = [];
  let face = '';
  const canvas: TextCanvas = {
    registerFont: () => {},
    font: (name) => {
      face = name;
    },
    fontSize: () => {},
    text: (text, x, y) => {
      runs.push({ face, text, x, y });
    },
  };
  return { text: new StatementText(canvas), runs };
}

const drawn = (value: string, width = 400) => {
  const { text, runs } = recorder();
  const block = text.wrap(value, width, 'regular', 10);
  text.draw(block, 0, 0, { width, size: 10, weight: 'regular', lineHeight: 12 });
  return { block, runs, text };
};

describe('statement PDF text (issue 41 item 8)', () => {
  it('finds every face in its npm package', () => {
    for (let face = 0; face < 5; face++) {
      for (const weight of ['regular', 'bold'] as const) assert.ok(fs.statSync(fontFile(face, weight)).size > 10_000, `face ${face} ${weight}`);
    }
  });

  it('draws each script in a face that has its glyphs: Latin, Chinese, Arabic, Hebrew, emoji', () => {
    const { runs } = drawn('Shop 上海星辰 متجر חנות 🧾');
    const faceOf = (part: string) => runs.find((r) => r.text.includes(part))?.face;
    assert.equal(faceOf('Shop'), 'sans-regular');
    assert.equal(faceOf('上海星辰'), 'cjk-regular');
    assert.equal(faceOf('متجر'), 'arabic-regular');
    assert.equal(faceOf('חנות'), 'hebrew-regular');
    assert.equal(faceOf('🧾'), 'emoji-regular');
    // The two right-to-left words read from the right: the Hebrew (second) is drawn left of the Arabic.
    const x = (part: string) => runs.find((r) => r.text.includes(part))!.x;
    assert.ok(x('Shop') < x('上海星辰') && x('上海星辰') < x('חנות') && x('חנות') < x('متجر') && x('متجر') < x('🧾'));
  });

  it('orders right-to-left text for display: Hebrew within a left-to-right line, runs of an Arabic line right to left', () => {
    // Left to right: "Paid", then the Hebrew words (fontkit reverses their glyphs), then "now".
    const hebrew = drawn('Paid חנות הכל now').runs;
    assert.deepEqual(
      hebrew.map((r) => r.text),
      ['Paid ', 'חנות הכל', ' ', 'now'],
    );
    assert.ok(
      hebrew.every((r, i) => i === 0 || r.x > hebrew[i - 1].x),
      'drawn left to right',
    );
    // An Arabic line (its base direction right to left) with a number: the number is drawn at the
    // left, as a reader of Arabic expects at the end of the sentence, its digits left to right; the
    // space between belongs to the Arabic run (fontkit lays it out at the run's left).
    const arabic = drawn('متجر النور 2026').runs;
    assert.deepEqual(
      arabic.map((r) => r.text),
      ['2026', 'متجر النور '],
    );
    // Brackets in right-to-left text are mirrored: the opening one, at the right of the word, is drawn as ")".
    assert.deepEqual(
      drawn('חנות (ירושלים)').runs.map((r) => r.text),
      ['(', 'ירושלים', ')', 'חנות '],
    );
  });

  it('wraps long text within its width, breaking a word too long for a line between characters', () => {
    const { text } = recorder();
    const name = `${'AVeryLongMerchantNameWithoutSpaces'.repeat(4)} 上海星辰贸易有限公司上海星辰贸易有限公司上海星辰贸易有限公司 مؤسسة النور للتجارة والمقاولات العامة`;
    const block = text.wrap(name, 150, 'bold', 12);
    assert.ok(block.lines.length >= 5, `${block.lines.length} lines`);
    for (const line of block.lines) {
      const shown = block.text.slice(line.start, line.end).trimEnd();
      assert.ok(text.width(shown, 'bold', 12) <= 150, `"${shown}" fits`);
    }
    // Every character is on some line, in order.
    assert.equal(block.lines.map((l) => block.text.slice(l.start, l.end)).join(''), block.text);
    // A newline always breaks; control characters are dropped.
    assert.equal(text.wrap('12 Harbour Road\nSingapore', 400, 'regular', 9).lines.length, 2);
    assert.equal(printable('a\tb\u0007c\r\nd'), 'a bc\nd');
  });

  it('prints amounts with thousands separators', () => {
    assert.equal(formatStatementAmount(0), '0.00');
    assert.equal(formatStatementAmount(5), '0.05');
    assert.equal(formatStatementAmount(99_999), '999.99');
    assert.equal(formatStatementAmount(100_000), '1,000.00');
    assert.equal(formatStatementAmount(-123_456_789), '-1,234,567.89');
    assert.equal(formatStatementAmount(1_000_000_000_000), '10,000,000,000.00');
  });

  it('sums the month by kind: charges, credits (refunds and cancellations), top-ups, adjustments', () => {
    const summary = statementSummary([
      { type: 'order_charge', sumCents: -5000, count: 3 },
      { type: 'refund_credit', sumCents: 700, count: 1 },
      { type: 'cancellation_credit', sumCents: 300, count: 1 },
      { type: 'top_up', sumCents: 25_000, count: 2 },
      { type: 'adjustment', sumCents: -150, count: 2 },
    ]);
    assert.deepEqual(summary, { chargesCents: -5000, creditsCents: 1000, topUpsCents: 25_000, adjustmentsCents: -150, entries: 9 });
    assert.deepEqual(statementSummary([]), { chargesCents: 0, creditsCents: 0, topUpsCents: 0, adjustmentsCents: 0, entries: 0 });
  });

  it('reads the issuer from SUPPLIER_NAME and SUPPLIER_ADDRESS, with defaults, and refuses bad values naming the variable', () => {
    assert.deepEqual(loadConfig({}).supplier, { name: 'Stockist Supplier', address: null });
    assert.deepEqual(loadConfig({ SUPPLIER_NAME: '上海星辰贸易有限公司', SUPPLIER_ADDRESS: '12 Harbour Road\\nSingapore 018956' }).supplier, {
      name: '上海星辰贸易有限公司',
      address: '12 Harbour Road\nSingapore 018956',
    });
    assert.throws(() => loadConfig({ SUPPLIER_NAME: 'x'.repeat(201) }), /SUPPLIER_NAME.*at most 200/);
    assert.throws(() => loadConfig({ SUPPLIER_ADDRESS: 'a\u0007b' }), /SUPPLIER_ADDRESS.*control characters/);
  });
});
