/**
 * The password-strength estimate (domain/password-strength.ts), run on a worker thread of
 * services/password-checks.ts: zxcvbn-ts's dictionaries take ~25 MB once ranked and a long
 * password's estimate tens of milliseconds of CPU, so neither is the server's while no password is
 * being set (docs/decisions.md, "Password strength off the main thread").
 */
import { weakPasswordProblem } from '../domain/password-strength.ts';

export interface PasswordCheck {
  password: string;
  userInputs: string[];
}

export default ({ password, userInputs }: PasswordCheck): string | null => weakPasswordProblem(password, userInputs);
