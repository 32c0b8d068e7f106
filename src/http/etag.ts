import type { FastifyReply } from 'fastify';
import type { VersionCheck } from '../domain/edit-versions.ts';
import { fieldError } from '../domain/errors.ts';

/**
 * Optimistic concurrency on the operator API (RFC 9110 §8.8.3, §13.1.1): a GET of a resource an
 * operator edits answers its row's version as a strong entity tag (`ETag: "7"`), and its PUT, PATCH
 * or upsert takes that tag back in `If-Match`. A mismatch is 412/41200 (domain/edit-versions.ts)
 * and nothing is written; without `If-Match` the write applies as before. A billing account's tag
 * is its terms' version (what its PATCH changes), not its balance's.
 */
export const etagOf = (version: number) => `"${version}"`;

/** Sets the resource's ETag on the reply (a GET, and the answer of a write: the new version). */
export const withEtag = <T>(reply: FastifyReply, version: number, data: T): T => {
  reply.header('ETag', etagOf(version));
  return data;
};

const STRONG_TAG = /^"(\d{1,15})"$/;
/** A weak tag never matches in If-Match (strong comparison, RFC 9110 §13.1.1); any other opaque tag is not one of ours. */
const ANY_TAG = /^(W\/)?"[\x21\x23-\x7e]*"$/;

/**
 * `If-Match` as a version check: absent → none; `*` → the row must exist; a list of entity tags →
 * one of the versions they name (a tag we never issue, or a weak one, matches nothing). Text that
 * is not an entity tag list is a 400.
 */
export function ifMatchCheck(header: string | undefined): VersionCheck | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (text === '*') return { anyVersion: true };
  const versions: number[] = [];
  for (const part of text.split(',')) {
    const tag = part.trim();
    if (!ANY_TAG.test(tag)) throw fieldError('if-match', 'must be * or a list of entity tags as the ETag header gave them, e.g. "3"');
    const strong = STRONG_TAG.exec(tag);
    if (strong) versions.push(Number(strong[1]));
  }
  return { versions };
}
