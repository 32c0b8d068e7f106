import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { parse } from 'fast-querystring';
import { AppError } from '../domain/errors.ts';

/**
 * Why a form body cannot be read as text, or null when it can. SPEC §1 wants invalid UTF-8
 * refused, not mended: a browser percent-encodes every byte outside ASCII, and a lenient decoder
 * (fast-querystring's, Node's) turns a bad sequence — `%ED%A0%80`, an encoded surrogate — into
 * U+FFFD, which would then be stored as if typed. `decodeURIComponent` is the strict decoder:
 * it throws on an escape that is not UTF-8, and on a `%` not followed by two hex digits.
 */
function formBodyProblem(raw: Buffer): string | null {
  if (!isUtf8(raw)) return 'is not valid UTF-8';
  for (const pair of raw.toString('utf8').split('&')) {
    for (const part of pair.split('=', 2)) {
      try {
        decodeURIComponent(part.replaceAll('+', ' '));
      } catch {
        return 'holds a percent-encoding that is not valid UTF-8 (or a % not followed by two hex digits)';
      }
    }
  }
  return null;
}

/**
 * The front ends' one parser of `application/x-www-form-urlencoded` bodies (console and business
 * manager): refused with 400/40000 when formBodyProblem finds one — the front end's error page
 * says why — else parsed by fast-querystring (repeated names become lists: ticked checkboxes).
 */
export function installFormBodyParser(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_request, raw: Buffer, done) => {
    const problem = formBodyProblem(raw);
    if (problem) return done(new AppError('invalid', 40000, `The form could not be read: its body ${problem}.`), undefined);
    done(null, parse(raw.toString('utf8')));
  });
}
