import type { AppError } from '../domain/errors.ts';
import type { ErrorEnvelope } from '../schemas/common.ts';

/** Every merchant answer is this envelope (SPEC §1); success carries `data`, failure `errors`. */
export const successEnvelope = <T>(data: T) => ({ code: 10000, message: 'success', data });

export const errorEnvelope = (e: AppError, requestId: string): ErrorEnvelope => ({
  code: e.code,
  message: e.message,
  data: null,
  requestId,
  ...(e.errors?.length ? { errors: e.errors } : {}),
});
