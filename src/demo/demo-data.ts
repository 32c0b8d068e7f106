/** The sandbox's console owner (`npm start`); `.test` is a reserved top-level domain, never delivered to. */
export const DEMO_OWNER_EMAIL = 'owner@stockist.test';

export const DEMO_MERCHANT_NAME = 'Demo Merchant';

/** The demo merchant's business manager admin (`npm start`, demo data only). */
export const DEMO_MANAGER_EMAIL = 'admin@demo-merchant.test';
const DEMO_SKU_COUNT = 240;

/** A small deterministic generator, so every demo database holds the same catalogue. */
function sequence(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const TREE: [string, [string, string[]][]][] = [
  [
    'Home & Kitchen',
    [
      ['Kitchen', ['Mugs', 'Cookware']],
      ['Decor', ['Lamps', 'Frames']],
    ],
  ],
  [
    'Electronics',
    [
      ['Audio', ['Headphones', 'Speakers']],
      ['Accessories', ['Cables', 'Chargers']],
    ],
  ],
  [
    'Outdoor',
    [
      ['Camping', ['Tents', 'Lights']],
      ['Garden', ['Tools', 'Planters']],
    ],
  ],
];

export const demoSku = (i: number) => `DEMO-${String(i).padStart(4, '0')}`;

/** The document `POST /admin/v1/import` takes (amounts, not cents). SPEC §12: three warehouses, a three-level tree, 240 SKUs, stock in one or several warehouses, three channel types. */
export function demoCatalogue(): unknown {
  const random = sequence(20221101);
  const categories: object[] = [];
  const leaves: { id: number; name: string }[] = [];
  TREE.forEach(([top, children], i) => {
    const topId = 1000 * (i + 1);
    categories.push({ categoryId: topId, name: top, parentId: 0, imgUrl: null });
    children.forEach(([mid, grandchildren], j) => {
      const midId = topId + 100 * (j + 1);
      categories.push({ categoryId: midId, name: mid, parentId: topId, imgUrl: null });
      grandchildren.forEach((leaf, k) => {
        const leafId = midId + k + 1;
        categories.push({ categoryId: leafId, name: leaf, parentId: midId, imgUrl: null });
        leaves.push({ id: leafId, name: leaf });
      });
    });
  });

  const products: { sku: string; price: number; [k: string]: unknown }[] = [];
  const stocks: object[] = [];
  for (let i = 1; i <= DEMO_SKU_COUNT; i++) {
    const leaf = leaves[i % leaves.length];
    const sku = demoSku(i);
    products.push({
      sku,
      name: `${leaf.name.replace(/s$/, '')} model ${i}`,
      categoryId: leaf.id,
      price: 99 + Math.floor(random() * 9900),
      weightGrams: 50 + Math.floor(random() * 2950),
      imageUrl: `https://img.example.com/demo/${sku}.jpg`,
      options: null,
    });
    const qty = () => Math.floor(random() * 500);
    // A third of the SKUs sit only in G007, a third in G007 and US01, a third in all three.
    stocks.push({ sku, warehouseCode: 'G007', qty: qty() });
    if (i % 3 !== 0) stocks.push({ sku, warehouseCode: 'US01', qty: qty() });
    if (i % 3 === 2) stocks.push({ sku, warehouseCode: 'G006', qty: qty() });
  }
  for (const p of products) p.price = Number(((p.price as number) / 100).toFixed(2));

  return {
    warehouses: [
      { warehouseCode: 'G007', name: 'Shenzhen Central', countryCode: 'CN', countryName: 'China', status: 1 },
      { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'CN', countryName: 'China', status: 1 },
      { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US', countryName: 'United States', status: 1 },
    ],
    categories,
    products,
    stocks,
    channels: [
      {
        channelCode: 'CN-STD',
        carriers: ['China Post', 'Yanwen', '4PX'],
        trackingUrlTemplate: 'https://t.17track.net/en#nums={trackingNo}',
        name: 'Standard Shipping',
        channelType: 'Standard',
        warehouseCodes: ['G007', 'G006'],
        countries: ['*'],
        baseFee: 2.5,
        perKgFee: 4,
        deliveryDaysMin: 8,
        deliveryDaysMax: 15,
      },
      {
        channelCode: 'CN-EXP',
        carriers: ['DHL Express', 'FedEx', 'UPS'],
        trackingUrlTemplate: 'https://t.17track.net/en#nums={trackingNo}',
        name: 'Express Shipping',
        channelType: 'Express',
        warehouseCodes: ['G007'],
        countries: ['*'],
        baseFee: 8,
        perKgFee: 9.5,
        deliveryDaysMin: 4,
        deliveryDaysMax: 7,
      },
      {
        channelCode: 'CN-EXD',
        name: 'Expedited Air',
        channelType: 'Expedited',
        warehouseCodes: ['G007', 'G006'],
        countries: ['US', 'CA', 'GB', 'DE', 'FR', 'AU'],
        baseFee: 15,
        perKgFee: 14,
        deliveryDaysMin: 2,
        deliveryDaysMax: 4,
      },
      {
        channelCode: 'US-STD',
        carriers: ['USPS', 'UPS Ground'],
        trackingUrlTemplate: 'https://tools.usps.com/go/TrackConfirmAction?tLabels={trackingNo}',
        name: 'USPS Ground',
        channelType: 'Standard',
        warehouseCodes: ['US01'],
        countries: ['US'],
        baseFee: 4,
        perKgFee: 1.2,
        deliveryDaysMin: 3,
        deliveryDaysMax: 6,
      },
      {
        channelCode: 'US-EXP',
        name: 'UPS 2nd Day',
        channelType: 'Express',
        warehouseCodes: ['US01'],
        countries: ['US', 'CA'],
        baseFee: 9,
        perKgFee: 2.5,
        deliveryDaysMin: 2,
        deliveryDaysMax: 3,
      },
    ],
  };
}
