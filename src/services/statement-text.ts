/**
 * Text on the statement PDF in any script (issue 41, item 8): a merchant named in Chinese, Arabic or
 * Hebrew, an emoji in a reason. pdfkit draws one font at a time, left to right, and its standard
 * fonts know only Latin-1 (an Arabic name came out as `Ø>Ý„ cF1d6)`), so this module
 * - picks, for each character, the first of the bundled Noto faces that has its glyph (Noto Sans,
 *   Noto Sans Hebrew, Noto Naskh Arabic, Noto Sans CJK SC, Noto Emoji — npm packages, embedded and
 *   subsetted by pdfkit; docs/decisions.md, "The statement PDF in every script"),
 * - orders right-to-left text for display with the Unicode bidirectional algorithm (bidi-js), while
 *   fontkit shapes Arabic (its joining forms) within each right-to-left run,
 * - breaks text into lines that fit a width at the places UAX #14 allows (linebreak, pdfkit's own),
 *   and inside a word too long for the line, between characters, so that nothing runs off the page.
 * One instance per document: faces are opened when a character first needs them.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import bidiFactory, { type EmbeddingLevels } from 'bidi-js';
import * as fontkit from 'fontkit';
import LineBreaker from 'linebreak';

export type Weight = 'regular' | 'bold';

const require = createRequire(import.meta.url);

/** The faces, in the order a character looks for its glyph; each file inside its npm package, found from the package's entry point. */
const FACES = [
  { key: 'sans', entry: () => require.resolve('@embedpdf/fonts-latin'), regular: 'fonts/NotoSans-Regular.ttf', bold: 'fonts/NotoSans-Bold.ttf' },
  {
    key: 'hebrew',
    entry: () => require.resolve('@embedpdf/fonts-hebrew'),
    regular: 'fonts/NotoSansHebrew-Regular.ttf',
    bold: 'fonts/NotoSansHebrew-Bold.ttf',
  },
  {
    key: 'arabic',
    entry: () => require.resolve('@embedpdf/fonts-arabic'),
    regular: 'fonts/NotoNaskhArabic-Regular.ttf',
    bold: 'fonts/NotoNaskhArabic-Bold.ttf',
  },
  { key: 'cjk', entry: () => require.resolve('@embedpdf/fonts-sc'), regular: 'fonts/NotoSansHans-Regular.otf', bold: 'fonts/NotoSansHans-Bold.otf' },
  {
    key: 'emoji',
    entry: () => require.resolve('@expo-google-fonts/noto-emoji'),
    regular: '400Regular/NotoEmoji_400Regular.ttf',
    bold: '700Bold/NotoEmoji_700Bold.ttf',
  },
] as const;
const SANS = 0;
const EMOJI = FACES.length - 1;

/** Where a face's file is: up from its package's entry point (the packages' `exports` hide the files themselves). */
export function fontFile(faceIndex: number, weight: Weight): string {
  const face = FACES[faceIndex];
  for (let dir = path.dirname(face.entry()); ; dir = path.dirname(dir)) {
    const file = path.join(dir, face[weight]);
    if (fs.existsSync(file)) return file;
    if (path.dirname(dir) === dir) throw new Error(`statement font ${face[weight]} not found (face ${face.key}): run npm ci`);
  }
}

/** The subset of pdfkit's document this module draws with. */
export interface TextCanvas {
  /** pdfkit takes a file's bytes or a fontkit font (pdfkit 0.20). */
  registerFont(name: string, src: fontkit.Font): unknown;
  font(name: string): unknown;
  fontSize(size: number): unknown;
  text(text: string, x: number, y: number, options: Record<string, unknown>): unknown;
}

interface Face {
  name: string;
  font: fontkit.Font;
  /** Font units → points at size 1. */
  scale: number;
}

/** A run drawn in one face and one direction: its text already in the order fontkit wants it. */
interface VisualRun {
  face: number;
  text: string;
  /** Shaped by fontkit (its default features), or drawn glyph by glyph (plain Latin, fast). */
  shaped: boolean;
}

/** A text broken into lines that fit a width: each line a [start, end) range of `text`. */
export interface TextBlock {
  text: string;
  lines: { start: number; end: number }[];
  /** The bidi levels of `text`, when it holds right-to-left characters. */
  levels: EmbeddingLevels | null;
}

// Plain Latin (ASCII, Latin-1, the Latin extensions), no combining marks: glyph widths add up, no shaping needed.
const SIMPLE = /^[\u0020-\u007e\u00a0-\u02ff]*$/;
const ASCII = /^[\u0020-\u007e]*$/;
const RTL_CHAR = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]|[\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;
const STRONG_RTL = /[\p{Script=Hebrew}\p{Script=Arabic}]/u;
// Marks, joiners, variation selectors and skin-tone modifiers belong to the character before them.
const CLINGS = /^(?:\p{M}|\u200c|\u200d|[\ufe00-\ufe0f]|[\u{1f3fb}-\u{1f3ff}]|[\u{e0020}-\u{e007f}])$/u;
const NEUTRAL = /^[\s\p{P}\p{S}\p{N}]$/u;
const PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
/**
 * The features a plain Latin run is drawn with: none. pdfkit hands them to the face's `layout`,
 * which then skips fontkit's shaping (see `drawingFace`).
 */
const PLAIN: Record<string, boolean> = Object.freeze({ kern: false, liga: false, calt: false, clig: false });

/** A plain run as fontkit would lay it out with no features: each character's glyph at its advance. */
class PlainRun {
  readonly glyphs: fontkit.Glyph[];
  readonly positions: { xAdvance: number; yAdvance: number; xOffset: number; yOffset: number }[];
  constructor(glyphs: fontkit.Glyph[]) {
    this.glyphs = glyphs;
    this.positions = glyphs.map((g) => ({ xAdvance: g.advanceWidth, yAdvance: 0, xOffset: 0, yOffset: 0 }));
  }
  /** pdfkit scales the positions in place, then reads the width from them. */
  get advanceWidth(): number {
    let width = 0;
    for (const p of this.positions) width += p.xAdvance;
    return width;
  }
}

/**
 * The face as pdfkit is given it (pdfkit takes a fontkit font): fontkit's own, except that a plain
 * Latin run (drawn with `PLAIN`) is laid out as its characters' glyphs. fontkit sets up its
 * shaping plan for every run, even with every feature off: a 73k-line month's dates and amounts
 * took about 75 s of it (measured); their glyphs alone take a fraction of that.
 */
function drawingFace(font: fontkit.Font): fontkit.Font {
  // A plain run's characters are few (Latin-1 and the Latin extensions): their glyphs are looked up once.
  const glyphs = new Map<string, fontkit.Glyph>();
  const glyphOf = (char: string) => {
    let glyph = glyphs.get(char);
    if (!glyph) glyphs.set(char, (glyph = font.glyphForCodePoint(char.codePointAt(0)!)));
    return glyph;
  };
  const layout = (text: string, ...rest: unknown[]) =>
    rest[0] === PLAIN ? new PlainRun(Array.from(text, glyphOf)) : (font.layout as (...a: unknown[]) => fontkit.GlyphRun)(text, ...rest);
  return new Proxy(font, { get: (target, property) => (property === 'layout' ? layout : Reflect.get(target, property)) });
}
/** Laid-out widths kept per document: enough for the repeated words of a table, bounded for a 73k-line month. */
const WIDTH_CACHE_LIMIT = 4096;

const bidi = bidiFactory();
const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/** Text as the statement prints it: one form of each character, tabs as spaces, no other control characters. */
export function printable(text: string): string {
  return text
    .normalize('NFC')
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, ' ')
    .replace(/(?!\n)\p{Cc}/gu, '');
}

export class StatementText {
  readonly #canvas: TextCanvas;
  readonly #faces = new Map<string, Face>();
  readonly #advances = new Map<string, number>();
  readonly #widths = new Map<string, number>();

  constructor(canvas: TextCanvas) {
    this.#canvas = canvas;
  }

  /** The name a face is registered under in the document (opened if it was not yet). */
  fontName(face: number, weight: Weight): string {
    return this.#face(face, weight).name;
  }

  /** The width of one line of text, in points. */
  width(text: string, weight: Weight, size: number): number {
    if (ASCII.test(text)) return this.#plainWidth(text, weight) * size;
    let width = 0;
    for (const run of this.#runs(text, weight)) width += this.#runWidth(run.face, weight, text.slice(run.start, run.end));
    return width * size;
  }

  /** The text broken into lines no wider than `width` (a newline always breaks). */
  wrap(raw: string, width: number, weight: Weight, size: number): TextBlock {
    const text = printable(raw);
    const levels = RTL_CHAR.test(text) ? bidi.getEmbeddingLevels(text) : null;
    if (!text.includes('\n') && this.width(text, weight, size) <= width) return { text, lines: [{ start: 0, end: text.length }], levels };
    const fits = (start: number, end: number) => this.width(text.slice(start, end).trimEnd(), weight, size) <= width;
    const lines: { start: number; end: number }[] = [];
    let start = 0;
    let end = 0;
    const breaker = new LineBreaker(text);
    for (let bk = breaker.nextBreak(); bk; bk = breaker.nextBreak()) {
      const segmentEnd = bk.position;
      if (!fits(start, segmentEnd)) {
        if (end > start) {
          lines.push({ start, end });
          start = end;
        }
        if (!fits(start, segmentEnd)) {
          // A word wider than the line: as many characters as fit on each line.
          const from = start;
          for (const { index, segment } of graphemes.segment(text.slice(from, segmentEnd))) {
            const at = from + index;
            if (at > start && !fits(start, at + segment.length)) {
              lines.push({ start, end: at });
              start = at;
            }
          }
        }
      }
      end = segmentEnd;
      if (bk.required) {
        lines.push({ start, end });
        start = end;
      }
    }
    if (end > start || lines.length === 0) lines.push({ start, end });
    return { text, lines, levels };
  }

  /**
   * Draws each line of a block from the top at (x, top), `lineHeight` apart, left or right aligned
   * in `width`; returns the y below the last line.
   */
  draw(block: TextBlock, x: number, top: number, o: { width: number; size: number; weight: Weight; lineHeight: number; align?: 'left' | 'right' }): number {
    let y = top;
    for (const line of block.lines) {
      const runs = this.#visualRuns(block, line.start, line.end);
      const widths = runs.map((r) => this.#runWidth(r.face, o.weight, r.text) * o.size);
      const lineWidth = widths.reduce((a, b) => a + b, 0);
      let cx = o.align === 'right' ? x + o.width - lineWidth : x;
      // One baseline for every face of the line: Noto Sans's ascent below the line's top.
      const baseline = y + o.size * 1.069;
      runs.forEach((run, i) => {
        this.#canvas.font(this.#face(run.face, o.weight).name);
        this.#canvas.fontSize(o.size);
        // The width is known: pdfkit need not lay the run out again to measure it.
        this.#canvas.text(run.text, cx, baseline, {
          lineBreak: false,
          baseline: 'alphabetic',
          features: run.shaped ? [] : PLAIN,
          textWidth: widths[i],
          wordCount: 1,
        });
        cx += widths[i];
      });
      y += o.lineHeight;
    }
    return y;
  }

  /** A line's runs of one face and one direction, in display order, trailing spaces left out. */
  #visualRuns(block: TextBlock, start: number, rawEnd: number): VisualRun[] {
    const { text } = block;
    let end = rawEnd;
    while (end > start && /\s/.test(text[end - 1])) end--;
    if (end === start) return [];
    const line = text.slice(start, end);
    const logical = this.#runs(line, 'regular');
    if (!block.levels || !RTL_CHAR.test(line)) {
      return logical.map((r) => ({ face: r.face, text: line.slice(r.start, r.end), shaped: !(r.face === SANS && SIMPLE.test(line.slice(r.start, r.end))) }));
    }
    const faceAt = new Uint8Array(end - start);
    for (const r of logical) faceAt.fill(r.face, r.start, r.end);
    const levels = block.levels.levels;
    const mirrors = bidi.getMirroredCharactersMap(text, levels, start, end - 1);
    // The line's characters in display order: each segment bidi-js names is reversed in turn.
    const order = Array.from({ length: end - start }, (_, k) => start + k);
    for (const [from, to] of bidi.getReorderSegments(text, block.levels, start, end - 1)) {
      const flipped = order.slice(from - start, to - start + 1).reverse();
      order.splice(from - start, flipped.length, ...flipped);
    }
    const groups: { lo: number; hi: number; face: number; rtl: boolean }[] = [];
    let previous = -2;
    for (const i of order) {
      const rtl = (levels[i] & 1) === 1;
      const face = faceAt[i - start];
      const group = groups.at(-1);
      if (group && group.face === face && group.rtl === rtl && i === previous + (rtl ? -1 : 1)) {
        group.lo = Math.min(group.lo, i);
        group.hi = Math.max(group.hi, i);
      } else {
        groups.push({ lo: i, hi: i, face, rtl });
      }
      previous = i;
    }
    return groups.map((g) => {
      let runText = '';
      for (let i = g.lo; i <= g.hi; i++) runText += mirrors.get(i) ?? text[i];
      // fontkit lays Hebrew and Arabic out right to left itself (shaping first); a right-to-left run
      // of neutral characters only (spaces, brackets, an emoji) is reversed here, by code point.
      if (g.rtl && !STRONG_RTL.test(runText)) runText = Array.from(runText).reverse().join('');
      return { face: g.face, text: runText, shaped: g.rtl || !(g.face === SANS && SIMPLE.test(runText)) };
    });
  }

  /** The text's runs of one face, in logical order. */
  #runs(text: string, weight: Weight): { start: number; end: number; face: number }[] {
    if (ASCII.test(text)) return [{ start: 0, end: text.length, face: SANS }];
    const runs: { start: number; end: number; face: number }[] = [];
    let index = 0;
    for (const char of text) {
      const previous = runs.at(-1);
      const face = this.#faceFor(char, previous?.face ?? null, weight);
      if (previous && previous.face === face) previous.end = index + char.length;
      else runs.push({ start: index, end: index + char.length, face });
      index += char.length;
    }
    return runs;
  }

  #faceFor(char: string, previous: number | null, weight: Weight): number {
    const cp = char.codePointAt(0)!;
    if (previous !== null && CLINGS.test(char)) return previous;
    // Spaces and punctuation stay with the text around them (a right-to-left run stays whole), but
    // not with an emoji: Noto Emoji's space is wider than a letter.
    if (previous !== null && previous !== EMOJI && NEUTRAL.test(char) && this.#face(previous, weight).font.hasGlyphForCodePoint(cp)) return previous;
    if (cp < 0x80) return SANS;
    if (PICTOGRAPHIC.test(char) && this.#face(EMOJI, weight).font.hasGlyphForCodePoint(cp)) return EMOJI;
    for (let i = 0; i < FACES.length; i++) if (this.#face(i, weight).font.hasGlyphForCodePoint(cp)) return i;
    // No face has it: Noto Sans draws its "missing" box.
    return SANS;
  }

  /** A run's width at size 1. */
  #runWidth(face: number, weight: Weight, text: string): number {
    if (face === SANS && SIMPLE.test(text)) return this.#plainWidth(text, weight);
    const key = `${face}${weight}${text}`;
    let width = this.#widths.get(key);
    if (width === undefined) {
      const f = this.#face(face, weight);
      width = f.font.layout(text).advanceWidth * f.scale;
      if (this.#widths.size >= WIDTH_CACHE_LIMIT) this.#widths.clear();
      this.#widths.set(key, width);
    }
    return width;
  }

  /** Plain Latin at size 1: the sum of its glyphs' advances (what pdfkit draws without shaping). */
  #plainWidth(text: string, weight: Weight): number {
    let width = 0;
    for (const char of text) {
      const key = weight === 'bold' ? `b${char}` : char;
      let advance = this.#advances.get(key);
      if (advance === undefined) {
        const f = this.#face(SANS, weight);
        advance = f.font.glyphForCodePoint(char.codePointAt(0)!).advanceWidth * f.scale;
        this.#advances.set(key, advance);
      }
      width += advance;
    }
    return width;
  }

  #face(index: number, weight: Weight): Face {
    const name = `${FACES[index].key}-${weight}`;
    let face = this.#faces.get(name);
    if (!face) {
      const font = fontkit.create(fs.readFileSync(fontFile(index, weight))) as fontkit.Font;
      // One parse of the file, shared by the measuring here and pdfkit's drawing and subsetting.
      this.#canvas.registerFont(name, drawingFace(font));
      face = { name, font, scale: 1 / font.unitsPerEm };
      this.#faces.set(name, face);
    }
    return face;
  }
}
