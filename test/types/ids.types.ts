/**
 * Structure II, item 2, checked by the compiler (`tsc --noEmit` in `npm run typecheck`): ids are
 * numbers from the edge. `IdText` (and a merchant route's `LookupId`) parse the id in the schema,
 * so a handler's id parameter is a `RequestId` (a number), never the text: a handler cannot
 * receive an unparsed id, and there is no `Number(...)` left to forget. Each `@ts-expect-error`
 * below must stay an error.
 */
import type { Static } from 'typebox';
import { parseId, type RequestId } from '../../src/domain/ids.ts';
import type { IdParams } from '../../src/schemas/admin.ts';
import type { ConsoleInvitationParams } from '../../src/schemas/console-operations.ts';
import type { OrderIdParams } from '../../src/schemas/orders.ts';
import type { DeliveryParams } from '../../src/schemas/webhooks.ts';

declare const adminParams: Static<typeof IdParams>;
declare const consoleParams: Static<typeof ConsoleInvitationParams>;
declare const orderParams: Static<typeof OrderIdParams>;
declare const deliveryParams: Static<typeof DeliveryParams>;

export const parsedIds: number[] = [adminParams.id, consoleParams.id, consoleParams.invitationId, orderParams.id, deliveryParams.deliveryId];

export const unparsedIds = () => [
  // @ts-expect-error an operator route's id is the parsed number, not the text
  ((): string => adminParams.id)(),
  // @ts-expect-error the same for a console page's
  ((): string => consoleParams.invitationId)(),
  // @ts-expect-error and for a merchant route's (text that names no row arrives as 0: 404)
  ((): string => orderParams.id)(),
  // @ts-expect-error a string method on an id is a sign of an unparsed one
  deliveryParams.id.trim(),
];

export const madeOnlyByParsing = () => [
  parseId('12'),
  // @ts-expect-error a plain number is not a request id: only the schema's parse (or parseId, lookupId) makes one
  ((): RequestId => 12)(),
  // @ts-expect-error nor the text
  ((): RequestId => '12')(),
];
