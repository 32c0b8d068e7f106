/**
 * SPEC §18: claims after shipment — a parcel lost, damaged, wrong or incomplete — as pure rules:
 * the state machine (one table of allowed transitions), what each line may still claim, and the
 * credit in integer minor units. The store keeps the rows; services/claims.service.ts decides with
 * these (docs/claims.md).
 */
import { AppError, validationFailed, type FieldError } from './errors.ts';
import type { OrderPlan } from './order-plan.ts';

export const CLAIM_REASONS = ['not_received', 'damaged', 'wrong_item', 'missing_parts', 'quality'] as const;
export type ClaimReason = (typeof CLAIM_REASONS)[number];

export const CLAIM_RESOLUTIONS = ['refund', 'reship'] as const;
export type ClaimResolution = (typeof CLAIM_RESOLUTIONS)[number];

export const CLAIM_STATUSES = ['open', 'approved', 'rejected', 'cancelled', 'awaiting_return', 'received', 'credited', 'reshipped'] as const;
export type ClaimStatus = (typeof CLAIM_STATUSES)[number];

/**
 * What can happen to a claim. `approve` with `returnRequired` is `approve` then `require_return` in
 * one transaction; an approval (or a receipt) without a return is followed, in the same
 * transaction, by `credit` or `reship` as the claim's resolution says.
 */
export const CLAIM_ACTIONS = ['approve', 'reject', 'cancel', 'require_return', 'post_return', 'receive', 'credit', 'reship', 'switch_resolution'] as const;
export type ClaimAction = (typeof CLAIM_ACTIONS)[number];

/** Who may take each action: the merchant (its API) or the operator (its API, the console). */
export const CLAIM_ACTION_ACTOR: Record<ClaimAction, 'merchant' | 'operator'> = {
  approve: 'operator',
  reject: 'operator',
  cancel: 'merchant',
  require_return: 'operator',
  post_return: 'merchant',
  receive: 'operator',
  credit: 'operator',
  reship: 'operator',
  switch_resolution: 'operator',
};

/**
 * The state machine (issue 40): every state, and the state each allowed action leads to. An action
 * missing from a state's row is refused (409). `post_return` keeps the claim awaiting its return
 * (the merchant may correct the tracking); `switch_resolution` keeps the claim where it is.
 */
const TRANSITIONS: Record<ClaimStatus, Partial<Record<ClaimAction, ClaimStatus>>> = {
  open: { approve: 'approved', reject: 'rejected', cancel: 'cancelled' },
  approved: { require_return: 'awaiting_return', credit: 'credited', reship: 'reshipped', switch_resolution: 'approved' },
  awaiting_return: { post_return: 'awaiting_return', receive: 'received', switch_resolution: 'awaiting_return' },
  received: { credit: 'credited', reship: 'reshipped', switch_resolution: 'received' },
  rejected: {},
  cancelled: {},
  credited: {},
  reshipped: {},
};

/** The state `action` leads to from `status`, or null when the table does not allow it. */
export function claimTransition(status: ClaimStatus, action: ClaimAction): ClaimStatus | null {
  return TRANSITIONS[status][action] ?? null;
}

/** The states from which `action` is allowed (for a refusal's message and the SQL guard of a decision). */
export function statesAllowing(action: ClaimAction): ClaimStatus[] {
  return CLAIM_STATUSES.filter((s) => claimTransition(s, action) !== null);
}

/** A claim that holds its lines' quantities: every state but the two that end it without effect. */
export const holdsQuantity = (status: ClaimStatus) => status !== 'rejected' && status !== 'cancelled';

/** A claim whose money or goods moved: it can never move again. */
export const isResolved = (status: ClaimStatus) => status === 'credited' || status === 'reshipped';

/** 409/40903: the claim is not in a state that allows this action. */
export function claimStateRefusal(status: ClaimStatus, action: ClaimAction): AppError {
  const allowed = statesAllowing(action);
  return new AppError('conflict', 40903, `claim is ${status}: ${action.replace('_', ' ')} is allowed only while it is ${allowed.join(' or ')}`, [
    { field: 'status', message: `is ${status}`, status, allowed },
  ]);
}

/** SPEC §18 default: a claim may be opened up to this many days after its split order shipped. */
export const DEFAULT_CLAIM_WINDOW_DAYS = 60;
const DAY_MS = 86_400_000;

/** Whether a split order shipped at `shippedAt` may still be claimed at `now`. */
export const withinClaimWindow = (shippedAt: number, now: number, windowDays: number) => now - shippedAt <= windowDays * DAY_MS;

/** One line of a split order as a claim sees it. */
export interface ClaimableItem {
  itemId: number;
  sku: string;
  unitCents: number;
  /** Units of the line that shipped: ordered − refunded (a shipped split is refunded only before it shipped). */
  quantity: number;
  refunded: number;
  /** Units of the line held by the split's other claims (open, approved or resolved: not rejected, not cancelled). */
  claimed: number;
}

/** The units of one line that may still be claimed: shipped − refunded − claimed (never below zero). */
export const claimableQuantity = (i: Pick<ClaimableItem, 'quantity' | 'refunded' | 'claimed'>) => Math.max(0, i.quantity - i.refunded - i.claimed);

export interface ClaimRequestLine {
  sku: string;
  quantity: number;
}

/** A claim line as stored: a quantity of one order item, at that item's unit price. */
export interface ClaimLinePlan {
  itemId: number;
  sku: string;
  quantity: number;
  unitCents: number;
}

/**
 * The lines a claim takes (SPEC §18): each requested SKU must be in the split (400, `items[i].sku`)
 * and named once (400), and its quantity may not pass what is still claimable of it (422/42204,
 * `items[i].quantity`, with `claimable`). A SKU that sits on several lines of the split is taken from
 * them in item order. Input errors (400) are reported before the quantity refusal.
 */
export function planClaimLines(items: readonly ClaimableItem[], requested: readonly ClaimRequestLine[]): ClaimLinePlan[] {
  const invalid: FieldError[] = [];
  const seen = new Map<string, number>();
  requested.forEach((r, index) => {
    const earlier = seen.get(r.sku);
    if (earlier !== undefined) invalid.push({ field: `items[${index}].sku`, message: `${r.sku} is already claimed by items[${earlier}]; name each SKU once` });
    else if (!items.some((i) => i.sku === r.sku)) invalid.push({ field: `items[${index}].sku`, message: `${r.sku} is not in this split order` });
    seen.set(r.sku, seen.get(r.sku) ?? index);
  });
  if (invalid.length) throw validationFailed(invalid);

  const tooMany: FieldError[] = [];
  const lines: ClaimLinePlan[] = [];
  requested.forEach((r, index) => {
    const ofSku = items.filter((i) => i.sku === r.sku).sort((a, b) => a.itemId - b.itemId);
    const claimable = ofSku.reduce((n, i) => n + claimableQuantity(i), 0);
    if (r.quantity > claimable) {
      tooMany.push({
        field: `items[${index}].quantity`,
        message: `at most ${claimable} of ${r.sku} can still be claimed`,
        sku: r.sku,
        requested: r.quantity,
        claimable,
      });
      return;
    }
    let left = r.quantity;
    for (const i of ofSku) {
      const take = Math.min(left, claimableQuantity(i));
      if (take > 0) lines.push({ itemId: i.itemId, sku: i.sku, quantity: take, unitCents: i.unitCents });
      left -= take;
    }
  });
  if (tooMany.length) throw new AppError('unprocessable', 42204, 'claim quantity exceeds what can still be claimed', tooMany);
  return lines;
}

/**
 * Whether the claim covers everything of the split that is still claimable (every unit that shipped
 * and no other claim holds): what makes a `not_received` claim a whole one, credited with the
 * split's freight.
 */
export function coversWholeSplit(items: readonly ClaimableItem[], lines: readonly Pick<ClaimLinePlan, 'itemId' | 'quantity'>[]): boolean {
  const taken = new Map<number, number>();
  for (const l of lines) taken.set(l.itemId, (taken.get(l.itemId) ?? 0) + l.quantity);
  return items.every((i) => i.claimed === 0 && (taken.get(i.itemId) ?? 0) === i.quantity - i.refunded);
}

/**
 * The credit of a claim resolved by refund (SPEC §18), in minor units: its lines' unit prices ×
 * quantities, plus the split's freight when the claim is a whole `not_received` (the parcel never
 * came, so its shipping was paid for nothing).
 */
export function claimCreditCents(
  lines: readonly Pick<ClaimLinePlan, 'quantity' | 'unitCents'>[],
  freight: { wholeNotReceived: boolean; freightCents: number },
): number {
  const goods = lines.reduce((sum, l) => sum + l.unitCents * l.quantity, 0);
  return goods + (freight.wholeNotReceived ? freight.freightCents : 0);
}

/** The claim's lines by SKU, in first-seen order, as the API shows them (`items: [{sku, quantity}]`). */
export function linesBySku(lines: readonly Pick<ClaimLinePlan, 'sku' | 'quantity'>[]): ClaimRequestLine[] {
  const bySku = new Map<string, number>();
  for (const l of lines) bySku.set(l.sku, (bySku.get(l.sku) ?? 0) + l.quantity);
  return [...bySku].map(([sku, quantity]) => ({ sku, quantity }));
}

/** A claim names at most this many SKUs (an order has at most 100 lines). */
export const MAX_CLAIM_LINES = 100;
/** SPEC §18: at most six evidence files per claim. */
export const MAX_CLAIM_EVIDENCE = 6;

/** Where a keyset walk of the merchant's claims stands: after (below) claim `beforeId`, with the walk's filters and page size. */
export interface ClaimCursor {
  beforeId: number;
  pageSize: number;
  page: number;
  status: ClaimStatus | null;
  splitOrderId: number | null;
  createStart: number | null;
  createEnd: number | null;
}

const CLAIM_CURSOR_PREFIX = 'cl1_';

export const encodeClaimCursor = (c: ClaimCursor) =>
  CLAIM_CURSOR_PREFIX +
  Buffer.from(JSON.stringify({ b: c.beforeId, z: c.pageSize, p: c.page, s: c.status, o: c.splitOrderId, cs: c.createStart, ce: c.createEnd })).toString(
    'base64url',
  );

/** The cursor, or null when the text is not one this API issued. */
export function decodeClaimCursor(text: string): ClaimCursor | null {
  if (!text.startsWith(CLAIM_CURSOR_PREFIX)) return null;
  let b: Record<string, unknown>;
  try {
    b = JSON.parse(Buffer.from(text.slice(CLAIM_CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const id = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;
  const orNull = (v: unknown) => v === null || id(v);
  if (typeof b !== 'object' || b === null || !id(b.b) || !id(b.z) || (b.z as number) > 250 || !id(b.p)) return null;
  if (!(b.s === null || (CLAIM_STATUSES as readonly unknown[]).includes(b.s)) || !orNull(b.o) || !orNull(b.cs) || !orNull(b.ce)) return null;
  return {
    beforeId: b.b as number,
    pageSize: b.z as number,
    page: b.p as number,
    status: b.s as ClaimStatus | null,
    splitOrderId: b.o as number | null,
    createStart: b.cs as number | null,
    createEnd: b.ce as number | null,
  };
}

/**
 * A reshipment's order plan (SPEC §18: charged nothing): the same allocation, split and stock as any
 * order, with every unit price and freight at zero, so the replacement's `finalAmount` is 0 and a
 * later refund or claim of it gives nothing back that was never paid.
 */
export function freeOfCharge(plan: OrderPlan): OrderPlan {
  return {
    ...plan,
    subtotalCents: 0,
    freightCents: 0,
    splits: plan.splits.map((s) => ({ ...s, freightCents: 0, items: s.items.map((i) => ({ ...i, unitCents: 0 })) })),
  };
}

/** SPEC §18: the evidence types a claim takes, each recognised by its bytes, never by its header. */
export const EVIDENCE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] as const;
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];

/** SPEC §18: an evidence file is at most 5 MB (5 × 1024 × 1024 bytes). */
export const MAX_EVIDENCE_BYTES = 5 * 1024 * 1024;

/** How many leading bytes `evidenceTypeOf` needs. */
export const EVIDENCE_SNIFF_BYTES = 12;

/** The file name extension a download of each type gets. */
export const EVIDENCE_EXTENSION: Record<EvidenceType, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp', 'application/pdf': 'pdf' };

const startsWith = (head: Uint8Array, bytes: readonly number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/**
 * The type of a file from its first bytes (magic numbers): JPEG `FF D8 FF`, PNG `89 50 4E 47 0D 0A
 * 1A 0A`, WebP `RIFF····WEBP`, PDF `%PDF-`; null for anything else (an SVG, HTML, a renamed
 * executable), whatever the upload's Content-Type said.
 */
export function evidenceTypeOf(head: Uint8Array): EvidenceType | null {
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(head, ascii('%PDF-'))) return 'application/pdf';
  return null;
}

/** Unreferenced evidence files are removed this long after their upload (SPEC §18: a day). */
export const ORPHAN_EVIDENCE_MS = 24 * 3600 * 1000;
