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

/**
 * The HTTP status an error envelope was answered with, from its code alone (SPEC §1: code = status
 * × 100 + n): for a refusal stored under an Idempotency-Key, recorded by the service that runs it.
 * Live answers take their status from the error's kind in src/http/errors.ts; the error catalogue
 * test checks that both agree for every code.
 */
export const envelopeStatus = (code: number) => Math.floor(code / 100);
