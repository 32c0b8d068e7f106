/** The marketplaces the original interface names, in their canonical spelling (SPEC §4.1). */
const SALE_PLATFORMS = [
  'Amazon',
  'Wish',
  'eBay',
  'Walmart',
  'Groupon',
  'IrobotBoxERP',
  'Shopify',
  'Aliexpress',
  'OverStock',
  'TopHatter',
  'JoyBuy',
  'Homedepot',
  'Facebookshop',
  'Mercari',
  'Facebook Marketplace',
] as const;

const byLowerCase = new Map(SALE_PLATFORMS.map((p) => [p.toLowerCase(), p]));

/** A known platform in its canonical spelling; anything else as sent (free text ≤ 32). */
export function normalizeSalePlatform(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '') return null;
  return byLowerCase.get(value.toLowerCase()) ?? value;
}
