/** Integer cents → a JSON number with at most two decimals (9.32). */
export const centsToAmount = (cents: number) => Math.round(cents) / 100;
