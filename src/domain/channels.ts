export const CHANNEL_TYPES = ['Standard', 'Express', 'Expedited'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** `express` → `Express`; null for anything outside the three types (SPEC §4.1). */
export function normalizeChannelType(value: string): ChannelType | null {
  return CHANNEL_TYPES.find((t) => t.toLowerCase() === value.trim().toLowerCase()) ?? null;
}
