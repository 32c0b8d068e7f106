/** Shared catalogue and order bodies for the order and refund suites. */
export const ORDER_CATALOGUE = {
  warehouses: [
    { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
    { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'CN' },
    { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
    { warehouseCode: 'W9', name: 'Closed', countryCode: 'DE', status: 0 },
  ],
  products: [
    { sku: 'A', name: 'Mug', price: '9.32', weightGrams: 350, imageUrl: 'https://img/a.jpg' },
    { sku: 'B', name: 'Plate', price: 4.5, weightGrams: 500 },
    { sku: 'C', name: 'Bowl', price: 3, weightGrams: 300 },
    { sku: 'Z', name: 'Nowhere', price: 1, weightGrams: 10 },
  ],
  stocks: [
    { sku: 'A', warehouseCode: 'G007', qty: 10 },
    { sku: 'A', warehouseCode: 'US01', qty: 5 },
    { sku: 'A', warehouseCode: 'W9', qty: 100 },
    { sku: 'B', warehouseCode: 'G006', qty: 7 },
    { sku: 'C', warehouseCode: 'G007', qty: 1000 },
  ],
  channels: [
    {
      channelCode: 'STD',
      name: 'Standard Shipping',
      channelType: 'Standard',
      warehouseCodes: ['G007', 'G006', 'US01'],
      countries: ['*'],
      baseFee: 2,
      perKgFee: '1.50',
      deliveryDaysMin: 6,
      deliveryDaysMax: 10,
    },
    {
      channelCode: 'EXP',
      name: 'Express',
      channelType: 'Express',
      warehouseCodes: ['G007'],
      countries: ['*'],
      baseFee: 8,
      perKgFee: 9.5,
      deliveryDaysMin: 3,
      deliveryDaysMax: 5,
    },
    {
      channelCode: 'US-STD',
      name: 'USPS Ground',
      channelType: 'Standard',
      warehouseCodes: ['US01'],
      countries: ['US'],
      baseFee: 1,
      perKgFee: 1,
      deliveryDaysMin: 3,
      deliveryDaysMax: 6,
    },
  ],
};

export const ADDRESS = { country: 'us', phone: '+1 555 0100', recipient: 'Ann Lee', province: 'CA', city: 'Los Angeles', street1: '1 Main St', zip: '90001' };

export const order = (lines: unknown[], extra: Record<string, unknown> = {}) => ({ orderAddress: ADDRESS, orderItemsList: lines, ...extra });

/** Places an order through the merchant API and returns its record. */
export async function placeOrder(t: import('./helpers.ts').TestApp, token: string, lines: unknown[], extra: Record<string, unknown> = {}) {
  const r = await t.merchant(token, 'POST', '/openapi/v1/order/orders', order(lines, extra));
  if (r.status !== 200) throw new Error(`order failed: ${r.raw}`);
  return (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${r.body.data}`)).body.data;
}
