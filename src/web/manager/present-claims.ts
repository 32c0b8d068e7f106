import { CLAIM_REASONS, CLAIM_RESOLUTIONS, CLAIM_STATUSES, MAX_CLAIM_EVIDENCE, MAX_EVIDENCE_BYTES } from '../../domain/claims.ts';
import type { ClaimForm, ManagerClaim, ManagerClaimFilters, ManagerClaimsPage } from '../../services/claims-manager.service.ts';
import { countsText } from '../list-counts.ts';
import { moment, money, query, type Choice, type Fact, type ListTools } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';

/**
 * The business manager's claim pages (SPEC §18; docs/claims.md, "The business manager"): the claim
 * form of a shipped split order, the claims list and one claim. Unit tests:
 * test/unit/web-presenters-claims.test.ts.
 */

const PREFIX = '/manager';
const CLAIMS = `${PREFIX}/claims`;

/** A claim's state in words, as the merchant reads it. */
const CLAIM_STATUS_WORDS: Record<(typeof CLAIM_STATUSES)[number], string> = {
  open: 'Open: waiting for the supplier',
  approved: 'Approved',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
  awaiting_return: 'Approved: send the goods back',
  received: 'Goods received back',
  credited: 'Credited to your account',
  reshipped: 'Reshipped: replacement order placed',
};

const REASON_WORDS: Record<(typeof CLAIM_REASONS)[number], string> = {
  not_received: 'Parcel not received',
  damaged: 'Damaged',
  wrong_item: 'Wrong item',
  missing_parts: 'Missing parts',
  quality: 'Quality problem',
};

const RESOLUTION_WORDS: Record<(typeof CLAIM_RESOLUTIONS)[number], string> = {
  refund: 'Refund: a credit to your account',
  reship: 'Reship: a replacement order, charged nothing',
};

const wordsOf = <K extends string>(table: Record<K, string>, value: string) => (table as Record<string, string>)[value] ?? value.replace(/_/g, ' ');

/** `PNG, 12 KB`: an evidence file's type and size. */
export function evidenceLabel(contentType: string, sizeBytes: number): string {
  const size = sizeBytes >= 1024 * 1024 ? `${(sizeBytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.max(1, Math.round(sizeBytes / 1024))} KB`;
  return `${contentType === 'application/pdf' ? 'PDF' : contentType.replace('image/', '').toUpperCase()}, ${size}`;
}

// ---- The claim form.

/** What was typed into the claim form (kept when it is refused). */
export interface ClaimFormInput {
  quantities: readonly string[];
  reason: string;
  resolution: string;
  description: string;
  /** Files uploaded already (by the page's script or by the refused submission): kept as `evidence`. */
  evidence: readonly { id: number; contentType: string; sizeBytes: number }[];
}

/** A refusal of the claim form: its reasons, and which fields they are about (`items[1].quantity`, `reason`, `evidence`…). */
export interface ClaimFormRefusal {
  reasons: readonly string[];
  fields: readonly string[];
}

/** views.claim-form: open a claim on one split order. */
export interface ClaimFormView extends PageModel {
  splitId: string;
  orderId: string;
  orderHref: string;
  action: string;
  uploadUrl: string;
  /** Why this split order takes no claim now (the form is not shown), or null. */
  closed: string | null;
  shipped: Html;
  tracking: string;
  lines: { index: number; sku: string; name: string; shipped: string; claimable: number; quantity: string; invalid: boolean }[];
  reasons: Choice[];
  resolutions: Choice[];
  description: string;
  evidence: { fileId: string; label: string }[];
  errors: readonly string[];
  invalid: { reason: boolean; resolution: boolean; description: boolean; evidence: boolean; lines: boolean };
  maxFiles: number;
  maxMegabytes: number;
  accept: string;
}

export function presentClaimForm(form: ClaimForm, input: ClaimFormInput | null, refusal: ClaimFormRefusal | null): ClaimFormView {
  const fields = new Set(refusal?.fields ?? []);
  const about = (prefix: string) => [...fields].some((f) => f === prefix || f.startsWith(`${prefix}[`) || f.startsWith(`${prefix}.`));
  return {
    title: `Open a claim on split order ${form.splitId}`,
    splitId: form.splitId,
    orderId: form.orderId,
    orderHref: `${PREFIX}/orders/${form.orderId}`,
    action: `${PREFIX}/split-orders/${form.splitId}/claim`,
    uploadUrl: `${CLAIMS}/files`,
    closed: form.closed,
    shipped: moment(form.shippedAt === null ? null : new Date(form.shippedAt).toISOString(), 'not shipped'),
    tracking: form.trackingCode ? `${form.carrier ?? ''} ${form.trackingCode}`.trim() : '—',
    lines: form.lines.map((l, index) => ({
      index,
      sku: l.sku,
      name: l.name,
      shipped: `${l.shipped}${l.refunded ? ` (${l.refunded} refunded)` : ''}${l.claimedElsewhere ? ` (${l.claimedElsewhere} on other claims)` : ''}`,
      claimable: l.claimable,
      quantity: input?.quantities[index] ?? '',
      invalid: fields.has(`items[${index}].quantity`) || fields.has(`items[${index}].sku`),
    })),
    reasons: CLAIM_REASONS.map((value) => ({ value, selected: input?.reason === value, text: REASON_WORDS[value] })),
    resolutions: CLAIM_RESOLUTIONS.map((value) => ({ value, selected: (input?.resolution ?? 'refund') === value, text: RESOLUTION_WORDS[value] })),
    description: input?.description ?? '',
    evidence: (input?.evidence ?? []).map((f) => ({ fileId: String(f.id), label: evidenceLabel(f.contentType, f.sizeBytes) })),
    errors: refusal?.reasons ?? [],
    invalid: {
      reason: about('reason'),
      resolution: about('resolution'),
      description: about('description'),
      evidence: about('evidence') || about('files'),
      lines: about('items'),
    },
    maxFiles: MAX_CLAIM_EVIDENCE,
    maxMegabytes: MAX_EVIDENCE_BYTES / (1024 * 1024),
    accept: 'image/jpeg,image/png,image/webp,application/pdf',
  };
}

// ---- The claims list.

/** A row of the claims list. */
export interface ManagerClaimRow {
  claimNo: string;
  href: string;
  order: { href: string; text: string };
  status: string;
  statusText: string;
  reason: string;
  resolution: string;
  items: string;
  opened: Html;
  amount: string;
}

/** views.claims: the merchant's claims, newest first, with filters, counts, the CSV and paging. */
export interface ManagerClaimsView extends PageModel {
  filters: ManagerClaimFilters;
  statuses: Choice[];
  tools: ListTools;
  rows: ManagerClaimRow[];
  empty: string;
  next: string | null;
  previous: string | null;
}

const filterFields = (f: ManagerClaimFilters) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== '')) as Record<string, string>;

export function presentManagerClaims(result: ManagerClaimsPage, filters: ManagerClaimFilters, currency: string): ManagerClaimsView {
  const first = (result.pageNumber - 1) * result.pageSize + 1;
  const fields = filterFields(filters);
  const q = query(fields);
  const filtered = Object.keys(fields).length > 0;
  const pageLink = (page: number) => `${CLAIMS}?${query({ ...fields, page: String(page) })}`;
  return {
    title: 'Claims',
    filters,
    statuses: CLAIM_STATUSES.map((value) => ({ value, selected: filters.status === value, text: CLAIM_STATUS_WORDS[value] })),
    tools: {
      counts: result.list.length ? countsText({ first, last: first + result.list.length - 1, about: result.total, capped: result.total >= 10_000 }) : '',
      csv: `${CLAIMS}.csv${q ? `?${q}` : ''}`,
    },
    rows: result.list.map((c) => ({
      claimNo: c.claimNo,
      href: `${CLAIMS}/${c.claimNo}`,
      order: { href: `${PREFIX}/orders/${c.parentOrderId}`, text: `${c.parentOrderId} (split ${c.orderId})` },
      status: c.status,
      statusText: wordsOf(CLAIM_STATUS_WORDS, c.status),
      reason: wordsOf(REASON_WORDS, c.reason),
      resolution: c.resolution === 'refund' ? 'Refund' : 'Reship',
      items: c.items.map((i) => `${i.sku} × ${i.quantity}`).join(', '),
      opened: moment(c.createDate),
      amount: c.amount === null ? '—' : money(c.amount, currency),
    })),
    empty: filtered ? 'No claims match.' : 'No claims yet. Open one from a shipped order’s page (Orders).',
    next: result.total > result.pageNumber * result.pageSize && result.list.length > 0 ? pageLink(result.pageNumber + 1) : null,
    previous: result.pageNumber > 1 ? pageLink(result.pageNumber - 1) : null,
  };
}

// ---- One claim.

/** views.claim: one of the merchant's claims with its lines, evidence, history, decision and what the merchant may do now. */
export interface ManagerClaimView extends PageModel {
  claimNo: string;
  status: string;
  statusText: string;
  facts: Fact[];
  description: string | null;
  lines: { sku: string; name: string; quantity: string }[];
  evidence: { fileId: string; href: string; label: string }[];
  history: { when: Html; by: string; action: string; status: string; note: string | null }[];
  /** The return's tracking form (the supplier asked for the goods back), or null. */
  returnForm: { action: string; carrier: string; trackingCode: string; posted: boolean } | null;
  /** Why the last change asked for was not made (shown by the page's heading), or none. */
  errors: readonly string[];
  /** Where "Cancel the claim" posts (an open claim), or null. */
  cancel: string | null;
}

export function presentManagerClaim(
  c: ManagerClaim,
  mayWrite: boolean,
  returnTyped: { carrier: string; trackingCode: string; errors: readonly string[] } | null = null,
): ManagerClaimView {
  const claim = c.claim;
  const base = `${CLAIMS}/${claim.claimNo}`;
  const facts: Fact[] = [
    { label: 'Status', field: 'status', text: wordsOf(CLAIM_STATUS_WORDS, claim.status) },
    {
      label: 'Order',
      link: { href: `${PREFIX}/orders/${claim.parentOrderId}`, text: claim.parentOrderId, data: { name: 'order', value: claim.parentOrderId } },
    },
    { label: 'Split order', text: c.split ? `${claim.orderId} (${c.split.status})` : claim.orderId },
    { label: 'Shipped', html: moment(c.split?.shippedAt ? new Date(c.split.shippedAt).toISOString() : null) },
    { label: 'Carrier and tracking', text: c.split?.trackingCode ? `${c.split.carrier ?? ''} ${c.split.trackingCode}`.trim() : '—' },
    { label: 'Reason', text: wordsOf(REASON_WORDS, claim.reason) },
    { label: 'Resolution asked', text: wordsOf(RESOLUTION_WORDS, claim.resolution) },
    { label: 'Opened', html: moment(claim.createDate) },
    { label: 'Last change', html: moment(claim.updateDate) },
  ];
  if (claim.decisionReason)
    facts.push({ label: claim.status === 'rejected' ? 'Reason for the decision' : 'Note from the supplier', field: 'decision', text: claim.decisionReason });
  if (claim.amount !== null) facts.push({ label: 'Credited', field: 'amount', num: true, text: money(claim.amount, c.currency) });
  if (claim.replacementOrderId !== null)
    facts.push({
      label: 'Replacement order',
      link: {
        href: `${PREFIX}/orders/${claim.replacementOrderId}`,
        text: claim.replacementOrderId,
        data: { name: 'replacement', value: claim.replacementOrderId },
      },
    });
  if (claim.returnRequired)
    facts.push({
      label: 'Return tracking',
      field: 'return',
      text: claim.returnTracking ? `${claim.returnTracking.carrier} ${claim.returnTracking.trackingCode}` : 'not posted yet',
    });
  const awaiting = claim.status === 'awaiting_return';
  return {
    title: `Claim ${claim.claimNo}`,
    claimNo: claim.claimNo,
    status: claim.status,
    statusText: wordsOf(CLAIM_STATUS_WORDS, claim.status),
    facts,
    description: claim.description,
    lines: claim.items.map((i) => ({ sku: i.sku, name: c.names.get(i.sku) ?? '', quantity: String(i.quantity) })),
    evidence: c.evidence.map((f, i) => ({
      fileId: String(f.id),
      href: `${CLAIMS}/files/${f.id}`,
      label: `Evidence ${i + 1} of ${c.evidence.length}: ${evidenceLabel(f.contentType, f.sizeBytes)}`,
    })),
    history: c.history.map((h) => ({
      when: moment(new Date(h.at).toISOString()),
      by: h.by === 'you' ? 'You' : 'The supplier',
      action: h.action,
      status: wordsOf(CLAIM_STATUS_WORDS, h.status),
      note: h.note,
    })),
    returnForm:
      mayWrite && awaiting
        ? {
            action: `${base}/return`,
            carrier: returnTyped?.carrier ?? claim.returnTracking?.carrier ?? '',
            trackingCode: returnTyped?.trackingCode ?? claim.returnTracking?.trackingCode ?? '',
            posted: claim.returnTracking !== null,
          }
        : null,
    errors: returnTyped?.errors ?? [],
    cancel: mayWrite && claim.status === 'open' ? `${base}/cancel` : null,
  };
}
