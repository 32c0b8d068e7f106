import { AppError } from './errors.ts';

/**
 * One-time form keys of the web front ends (issue 29): every rendered form that must apply once
 * carries a random key (`_formKey`); the write it guards records the key in its own transaction
 * (through the audit row every such write has: store/audit.repository.ts), so a double click, a
 * reload or a resubmission of the same form applies nothing the second time and answers with the
 * first one's result page. Design: docs/decisions.md, "Form posts".
 */

/** A key as the form carries it: 22 or more URL-safe characters (random, ≥ 128 bits). */
export const FORM_KEY_PATTERN = '^[A-Za-z0-9_-]{22,64}$';

/** How long a used key is remembered: longer than any session (console 12 h, manager at most 24 h by default). */
export const FORM_KEY_TTL_MS = 7 * 24 * 3_600_000;

/** What a web write carries in its Actor: the form's key and the session that sent it. */
export interface FormKey {
  key: string;
  sessionHash: string;
}

/**
 * The form was sent already: its first submission applied (or is applying) the change. Never an
 * error page — the front end answers 303 to the first answer's page (`resultPath`, null while
 * the first is still answering).
 */
export class FormAlreadySent extends AppError {
  constructor(readonly resultPath: string | null) {
    super('conflict', 40900, 'this form was sent already; it took effect once');
  }
}
