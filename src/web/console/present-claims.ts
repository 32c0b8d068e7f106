import { CLAIM_REASONS, CLAIM_STATUSES, EVIDENCE_TYPES } from '../../domain/claims.ts';
import type { claimQueueForConsole, ConsoleClaim } from '../../services/claims-console.service.ts';
import type { ClaimQueueFilter } from '../../store/claims.repository.ts';
import { countsText } from '../list-counts.ts';
import { actorKindWords, moment, moneyFromCents, money, query, statusWords, type Choice, type Fact, type Link, type ListTools } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';
import { merchantLink } from './present.ts';

/**
 * The console's claims pages (SPEC §18; docs/claims.md, "The console"): the queue and one claim.
 * Money, times and ids become text here; the templates only place them.
 */

const PREFIX = '/console';
const CLAIMS = `${PREFIX}/claims`;

type QueuePage = Awaited<ReturnType<typeof claimQueueForConsole>>;

/** "Open", "Awaiting return", "Not received": a state, reason or resolution as a person reads it (statusWords). */
const words = statusWords;

/** `3 h`, `2 d 5 h`: how long a claim has waited. */
function ageText(seconds: number): string {
  const hours = Math.floor(seconds / 3600);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A row of the queue. */
export interface ClaimQueueRow {
  claimNo: string;
  claim: Link;
  order: Link;
  merchant: Link;
  status: string;
  statusText: string;
  reason: string;
  resolution: string;
  items: string;
  opened: Html;
  age: string;
  overSla: boolean;
}

/** views.claims: the queue with its filters, where it stands, its CSV and the next page. */
export interface ClaimQueueView extends PageModel {
  summary: string;
  slaHours: number;
  filters: { merchant: string };
  statuses: Choice[];
  reasons: Choice[];
  tools: ListTools;
  rows: ClaimQueueRow[];
  empty: string;
  next: string | null;
}

const filterQuery = (f: ClaimQueueFilter) =>
  query({
    ...(f.status ? { status: f.status } : {}),
    ...(f.merchantId !== null ? { merchant: String(f.merchantId) } : {}),
    ...(f.reason ? { reason: f.reason } : {}),
  });

export function presentClaimQueue(queue: QueuePage, filter: ClaimQueueFilter, slaHours: number): ClaimQueueView {
  const first = (queue.pageNumber - 1) * queue.pageSize + 1;
  const counts = { first, last: first + queue.list.length - 1, about: queue.total, capped: false };
  const q = filterQuery(filter);
  const filtered = filter.status !== null || filter.merchantId !== null || filter.reason !== null;
  const overdue = queue.list.filter((c) => c.overSla).length;
  return {
    title: 'Claims',
    summary: `Open claims first, oldest first; an open claim waiting more than ${slaHours} h is past the SLA${overdue > 0 ? ` (${overdue} on this page)` : ''}.`,
    slaHours,
    filters: { merchant: filter.merchantId === null ? '' : String(filter.merchantId) },
    statuses: CLAIM_STATUSES.map((value) => ({ value, selected: filter.status === value, text: statusWords(value) })),
    reasons: CLAIM_REASONS.map((value) => ({ value, selected: filter.reason === value, text: statusWords(value) })),
    tools: { counts: queue.list.length ? countsText(counts) : '', csv: `${CLAIMS}.csv${q ? `?${q}` : ''}` },
    rows: queue.list.map((c) => ({
      claimNo: c.claimNo,
      claim: { href: `${CLAIMS}/${c.claimNo}`, text: c.claimNo, data: { name: 'claim', value: c.claimNo } },
      order: { href: `${PREFIX}/orders/${c.parentOrderId}`, text: `${c.parentOrderId} (split ${c.orderId})` },
      merchant: merchantLink(c.merchantId, c.merchantName || c.merchantId),
      status: c.status,
      statusText: words(c.status),
      reason: words(c.reason),
      resolution: words(c.resolution),
      items: c.items.map((i) => `${i.sku} × ${i.quantity}`).join(', '),
      opened: moment(c.createDate),
      age: ageText(c.ageSeconds),
      overSla: c.overSla,
    })),
    empty: filtered ? 'No claims match.' : 'No claims yet.',
    next:
      queue.list.length > 0 && queue.total > queue.pageNumber * queue.pageSize
        ? `${CLAIMS}?${query({ ...Object.fromEntries(new URLSearchParams(q)), page: String(queue.pageNumber + 1) })}`
        : null,
  };
}

/** An evidence file as the claim page shows it: an image thumbnail (JPEG, PNG, WebP only) or a link (PDF). */
export interface EvidenceItem {
  fileId: string;
  href: string;
  /** `image`: an `<img>` of the console's download route; `link`: a download link only. */
  kind: 'image' | 'link';
  label: string;
}

const IMAGE_TYPES: readonly string[] = EVIDENCE_TYPES.filter((t) => t.startsWith('image/'));

/** Which decisions the page offers: what the claim's state allows and the signed-in role may do. */
export interface ClaimActions {
  approve: boolean;
  reject: boolean;
  requireReturn: boolean;
  receive: boolean;
  switchTo: 'refund' | 'reship' | null;
  /** A reshipment that could not be made (stock short): try it again once stock is back. */
  retryReship: boolean;
}

/** views.claim: one claim, its order and lines, the evidence, the description, the history and the decisions. */
export interface ClaimView extends PageModel {
  claimNo: string;
  status: string;
  statusText: string;
  overSla: boolean;
  facts: Fact[];
  description: string | null;
  lines: { sku: string; unitPrice: string; quantity: string; refunded: string; claimedHere: string; claimedElsewhere: string }[];
  evidence: EvidenceItem[];
  history: { when: Html; by: string; action: string; status: string; note: string | null }[];
  actions: ClaimActions;
  /** Where each decision posts. */
  post: { approve: string; requireReturn: string; reject: string; received: string; resolution: string };
  warehouses: Choice[];
  /** The claim's credit, were it approved now as a refund (its lines' prices; the freight of a whole `not_received` is added when it is credited). */
  creditHint: string;
}

export function presentClaim(c: ConsoleClaim, may: { decide: boolean; receive: boolean }, currency: string, defaultWarehouse: string | null): ClaimView {
  const claim = c.claim;
  const base = `${CLAIMS}/${claim.claimNo}`;
  const unresolved = claim.status === 'approved' || claim.status === 'awaiting_return' || claim.status === 'received';
  const facts: Fact[] = [
    { label: 'Status', text: words(claim.status) },
    { label: 'Merchant', link: merchantLink(c.merchant.id, c.merchant.name || String(c.merchant.id)) },
    {
      label: 'Order',
      link: { href: `${PREFIX}/orders/${claim.parentOrderId}`, text: claim.parentOrderId, data: { name: 'order', value: claim.parentOrderId } },
    },
    { label: 'Split order', text: c.split ? `${claim.orderId} (${words(c.split.status)}, from ${c.split.warehouseCode})` : claim.orderId },
    { label: 'Shipped', html: c.split?.shippedAt ? moment(c.split.shippedAt) : moment(null) },
    { label: 'Carrier and tracking', text: c.split?.carrier ? `${c.split.carrier} ${c.split.trackingCode ?? ''}`.trim() : '—' },
    { label: 'Reason', text: words(claim.reason) },
    { label: 'Resolution asked', text: words(claim.resolution) },
    { label: 'Opened', html: moment(claim.createDate) },
    { label: 'Waiting', text: `${ageText(c.ageSeconds)}${c.overSla ? ` (past the ${c.slaHours} h SLA)` : ''}` },
  ];
  if (claim.returnRequired)
    facts.push({ label: 'Return', text: claim.returnTracking ? `${claim.returnTracking.carrier} ${claim.returnTracking.trackingCode}` : 'not posted yet' });
  if (claim.amount !== null) facts.push({ label: 'Credited', text: money(claim.amount, currency) });
  if (claim.replacementOrderId !== null)
    facts.push({
      label: 'Replacement order',
      link: {
        href: `${PREFIX}/orders/${claim.replacementOrderId}`,
        text: claim.replacementOrderId,
        data: { name: 'replacement', value: claim.replacementOrderId },
      },
    });
  if (claim.decisionReason) facts.push({ label: 'Decision note', text: claim.decisionReason });
  const creditCents = c.lines.reduce((sum, l) => sum + l.unitCents * l.claimedHere, 0);
  return {
    title: `Claim ${claim.claimNo}`,
    claimNo: claim.claimNo,
    status: claim.status,
    statusText: words(claim.status),
    overSla: c.overSla,
    facts,
    description: claim.description,
    lines: c.lines.map((l) => ({
      sku: l.sku,
      unitPrice: moneyFromCents(l.unitCents, currency),
      quantity: String(l.quantity),
      refunded: String(l.refunded),
      claimedHere: String(l.claimedHere),
      claimedElsewhere: String(l.claimedElsewhere),
    })),
    evidence: c.evidence.map((f, i) => {
      const image = IMAGE_TYPES.includes(f.contentType);
      const size = f.sizeBytes >= 1024 * 1024 ? `${(f.sizeBytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.max(1, Math.round(f.sizeBytes / 1024))} KB`;
      return {
        fileId: String(f.id),
        href: `${CLAIMS}/files/${f.id}`,
        kind: image ? ('image' as const) : ('link' as const),
        label: `Evidence ${i + 1} of ${c.evidence.length}: ${f.contentType === 'application/pdf' ? 'PDF' : f.contentType.replace('image/', '').toUpperCase()}, ${size}`,
      };
    }),
    history: c.history.map((h) => ({
      when: moment(h.at),
      by: h.by.includes('@') ? h.by : actorKindWords(h.by),
      action: h.action,
      status: h.status ? words(h.status) : '',
      note: h.note,
    })),
    actions: {
      approve: may.decide && claim.status === 'open',
      reject: may.decide && claim.status === 'open',
      requireReturn: may.decide && claim.status === 'open',
      receive: may.receive && claim.status === 'awaiting_return',
      switchTo: may.decide && unresolved ? (claim.resolution === 'refund' ? 'reship' : 'refund') : null,
      retryReship: may.decide && claim.resolution === 'reship' && (claim.status === 'approved' || claim.status === 'received'),
    },
    post: {
      approve: `${base}/approve`,
      requireReturn: `${base}/require-return`,
      reject: `${base}/reject`,
      received: `${base}/received`,
      resolution: `${base}/resolution`,
    },
    warehouses: c.warehouseCodes.map((value) => ({ value, selected: value === defaultWarehouse })),
    creditHint: moneyFromCents(creditCents, currency),
  };
}
