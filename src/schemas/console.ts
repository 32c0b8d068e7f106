import { Type, type Static } from 'typebox';
import { IdText } from './common.ts';

/** Console forms arrive form-encoded; every field is a string (SPEC §1 Text holds, and trims them). */
export const SignInForm = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 256 }),
});
export type SignInForm = Static<typeof SignInForm>;

/** Every state-changing form carries the session's synchronizer token (or sends it as X-CSRF-Token). */
export const CsrfForm = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 128 })) });
export type CsrfForm = Static<typeof CsrfForm>;

export const RefundDecisionForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
});
export type RefundDecisionForm = Static<typeof RefundDecisionForm>;

export const ConsoleRefundParams = Type.Object({ refundNo: IdText('a refund number') });

export const ConsolePageQuery = Type.Object({ page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })) });
export type ConsolePageQuery = Static<typeof ConsolePageQuery>;
