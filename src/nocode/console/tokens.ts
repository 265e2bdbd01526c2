/**
 * Personal tokens in the console (N16): who may manage user tokens at
 * `/app/settings/tokens`, which lifetimes they may choose, and whether they may create
 * one right now. Pure: the routes read the session, this decides.
 *
 * - A session opened with a team token has no user: it is told to sign in as a user.
 * - A session opened with a user token (N14) chooses 1, 7, 30 or 90 days or no expiry,
 *   30 days preselected. HCP Terraform's user tokens work the same way: `expired-at` is
 *   optional (https://developer.hashicorp.com/terraform/cloud-docs/api-docs/user-tokens),
 *   and its token form suggests 30 days. The person already holds a user token, which
 *   may itself never expire, so offering "no expiration" grants nothing new.
 * - A session opened through an organization's identity provider (N16) chooses 1, 7, 30
 *   or 90 days (30 preselected; never "no expiry"), and may create a token only within
 *   10 minutes of that provider sign-in: a token outlives the session, so minting one
 *   needs a recent proof of who is at the keyboard.
 */

/** What the rules read of a console session (`ConsoleSession` of ../browser/console-session.ts has these fields). */
export interface TokenSession {
  caller: { kind: "user"; userId: string } | { kind: "team" };
  sso: null | { signedInAt: number };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** N16: an SSO sign-in older than this must be repeated before a token is created. */
export const FRESH_SIGN_IN_MS = 10 * 60 * 1000;

/** A lifetime offered by the form: a number of days, or `never`. */
export interface ExpiryChoice {
  value: string;
  label: string;
}

const DAYS = [1, 7, 30, 90] as const;
const DAY_CHOICES: ExpiryChoice[] = DAYS.map((d) => ({ value: String(d), label: d === 1 ? "1 day" : `${d} days` }));
const NEVER: ExpiryChoice = { value: "never", label: "No expiration" };

/** The choice preselected on the form. */
export const DEFAULT_EXPIRY = "30";

/** What the session may do on the tokens page. */
export type TokenRules =
  | { kind: "team" }
  | {
      kind: "user";
      userId: string;
      choices: readonly ExpiryChoice[];
      /** False for an SSO session whose provider sign-in is 10 minutes old or older. */
      mayCreate: boolean;
    };

/** The rules for `session` at `now` (ms since the epoch). */
export function tokenRules(session: TokenSession, now: number): TokenRules {
  const caller = session.caller;
  if (caller.kind !== "user") return { kind: "team" };
  if (session.sso === null)
    return { kind: "user", userId: caller.userId, choices: [...DAY_CHOICES, NEVER], mayCreate: true };
  const age = now - session.sso.signedInAt;
  return { kind: "user", userId: caller.userId, choices: DAY_CHOICES, mayCreate: age >= 0 && age < FRESH_SIGN_IN_MS };
}

/**
 * The `expired-at` (ms since the epoch, or null for never) of a token created at `now`
 * with the form's `choice`; undefined when the choice is not one the rules offer.
 */
export function expiryFor(
  rules: Extract<TokenRules, { kind: "user" }>,
  choice: string,
  now: number,
): number | null | undefined {
  if (!rules.choices.some((c) => c.value === choice)) return undefined;
  return choice === NEVER.value ? null : now + Number(choice) * DAY_MS;
}
