import { webUrlProblem } from './web-url.ts';

export const CHANNEL_TYPES = ['Standard', 'Express', 'Expedited'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** `express` → `Express`; null for anything outside the three types (SPEC §4.1). */
export function normalizeChannelType(value: string): ChannelType | null {
  return CHANNEL_TYPES.find((t) => t.toLowerCase() === value.trim().toLowerCase()) ?? null;
}

/** Where a tracking URL template puts the tracking number. */
const TRACKING_NO_PLACEHOLDER = '{trackingNo}';

/** A channel lists at most this many carriers for the ship form to offer. */
export const MAX_CHANNEL_CARRIERS = 20;

/**
 * Why a tracking URL template cannot be used, or null when it can: an absolute https URL with
 * `{trackingNo}` where the number goes (issue 29, 10), e.g. `https://track.example/{trackingNo}`;
 * the URL is held to the rule of every stored link (domain/web-url.ts).
 */
export function trackingTemplateProblem(template: string): string | null {
  if (!template.includes(TRACKING_NO_PLACEHOLDER)) return `must contain ${TRACKING_NO_PLACEHOLDER} where the tracking number goes`;
  return webUrlProblem(template.replaceAll(TRACKING_NO_PLACEHOLDER, 'X'), 'https');
}

/** The tracking page of a shipment: the template with the number (URL-encoded) in place; null without a template. */
export function trackingUrl(template: string | null, trackingNo: string): string | null {
  if (!template) return null;
  return template.replaceAll(TRACKING_NO_PLACEHOLDER, encodeURIComponent(trackingNo));
}

/** A channel's carriers as a form or a document gives them: trimmed, blanks dropped, each once (first spelling kept, case-insensitively). */
export function normalizeCarriers(carriers: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of carriers) {
    const c = raw.trim();
    if (c === '' || seen.has(c.toLowerCase())) continue;
    seen.add(c.toLowerCase());
    out.push(c);
  }
  return out;
}
