import { Type, type Static } from 'typebox';
import { IntegerLike, Str } from './common.ts';

export const AuditQuery = Type.Object({
  /** `nextCursor` of the previous page. */
  cursor: Type.Optional(Str(64)),
  limit: Type.Optional(IntegerLike({ minimum: 1, maximum: 200 })),
});
export type AuditQuery = Static<typeof AuditQuery>;
