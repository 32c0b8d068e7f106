import { type Match, ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary as commonDictionary } from '@zxcvbn-ts/language-common';
import { dictionary as englishDictionary, translations } from '@zxcvbn-ts/language-en';
import { passwordProblem } from './staff.ts';

/**
 * The password rule of both front ends, staff and merchant users alike (Structure II, 7): the
 * length rules (NIST SP 800-63B, `passwordProblem`), then a strength estimate by zxcvbn-ts —
 * common passwords and words (its English and common dictionaries), names, keyboard patterns,
 * sequences, repetitions, dates and recent years, l33t spellings, and the user's own address and
 * business name. Design and numbers: docs/decisions.md, "Password strength: zxcvbn-ts".
 */

/**
 * Only the first 64 characters are estimated: the library's own advice (a longer password is
 * strong anyway unless its start is weak, and then it is refused), and what bounds its time — the
 * cost grows with the length and was ~2.3 s for 256 characters.
 */
export const ESTIMATED_LENGTH = 64;

/**
 * zxcvbn's score 4 ("very unguessable"): at least 10^10 guesses. Score 3 (10^8) still lets
 * `Summer2024!!` and `superman2024!!` through.
 */
const MIN_GUESSES_LOG10 = 10;

/**
 * Built on first use (its dictionaries take ~0.1 s to rank), then only read. l33tMaxSubstitutions
 * is cut from 100 to 10: the l33t matcher's combinations were most of the time of a long
 * password (64 random characters: 1.2 s → 0.1 s under load) while `P@ssw0rd`-like spellings are
 * still found.
 */
let estimator: ZxcvbnFactory | undefined;
const estimate = (password: string, userInputs: string[]) => {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...commonDictionary, ...englishDictionary },
    graphs: adjacencyGraphs,
    translations,
    maxLength: ESTIMATED_LENGTH,
    l33tMaxSubstitutions: 10,
  });
  return estimator.check(password, userInputs);
};

/** The product's own name: the first word someone guessing here tries. */
const SITE_WORDS = ['stockist'];

/** What a predictable part of a password is, in words. */
function partWords(match: Match): string | null {
  switch (match.pattern) {
    case 'dictionary': {
      // Its dictionaries are named `<kind>-<language>`: passwords-common, firstnames-en, wikipedia-en …
      const kind = String(match.dictionaryName).split('-')[0];
      const what =
        kind === 'passwords'
          ? 'a common password'
          : kind === 'userInputs'
            ? 'your own address, or this service’s name'
            : kind === 'firstnames' || kind === 'lastnames'
              ? 'a common name'
              : 'a common word';
      return `${what}${match.reversed ? ' reversed' : ''}${match.l33t ? ' with look-alike characters' : ''}`;
    }
    case 'wordSequence':
      return 'a series of words everyone knows';
    case 'spatial':
      return 'keys next to each other';
    case 'repeat':
      return 'a repetition';
    case 'sequence':
      return 'a sequence';
    case 'date':
      return 'a date';
    case 'regex':
      return 'a recent year';
    default:
      return null;
  }
}

/**
 * Why `password` may not be used (a phrase after "The new password …"), or null when it may.
 * `userInputs`: what an attacker would try first for this user (their email address; its parts are
 * added), counted as common words, as is the product's name.
 */
export function weakPasswordProblem(password: string, userInputs: readonly string[] = []): string | null {
  const basic = passwordProblem(password);
  if (basic) return basic;
  const inputs = [
    ...new Set([...userInputs, ...SITE_WORDS].flatMap((input) => [input, ...input.toLowerCase().split(/[^\p{L}\p{N}]+/u)]).filter((s) => s.length >= 3)),
  ];
  const result = estimate(password, inputs);
  if (result.guessesLog10 >= MIN_GUESSES_LOG10) return null;
  const parts = result.sequence.flatMap((m) => {
    const words = partWords(m);
    return words ? [`“${m.token}” (${words})`] : [];
  });
  const warning = result.feedback.warning?.replace(/\.$/, '').toLowerCase();
  const why = [warning, parts.length ? `it is built from ${parts.join(', ')}` : null].filter(Boolean).join('; ');
  return `is too easy to guess (about 10^${Math.floor(result.guessesLog10)} guesses; 10^${MIN_GUESSES_LOG10} needed)${why ? `: ${why}` : ''}. A few unrelated words, or a password manager's, are strong`;
}
