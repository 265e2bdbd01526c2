/**
 * Personal token rules of the console (N16): a team session has none; a token session
 * chooses 1–90 days or no expiry; an SSO session chooses 1–90 days only and creates a
 * token only within 10 minutes of its provider sign-in.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_EXPIRY,
  expiryFor,
  FRESH_SIGN_IN_MS,
  type TokenSession,
  tokenRules,
} from "../../../../src/nocode/console/tokens";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 28, 3, 0, 0);

function session(caller: TokenSession["caller"], sso: TokenSession["sso"] = null): TokenSession {
  return { caller, sso };
}

const user = { kind: "user", userId: "user-1", username: "alice" } as const;
const sso = (signedInAt: number) => ({ organizationId: "acme", signedInAt });

function userRules(s: TokenSession, now = NOW) {
  const rules = tokenRules(s, now);
  if (rules.kind !== "user") throw new Error("expected user rules");
  return rules;
}

describe("tokenRules", () => {
  it("a team session has no personal tokens", () => {
    expect(tokenRules(session({ kind: "team" }), NOW)).toEqual({
      kind: "team",
    });
  });

  it("a token session chooses 1, 7, 30 or 90 days or no expiration, and may always create", () => {
    const rules = userRules(session(user));
    expect(rules.userId).toBe("user-1");
    expect(rules.mayCreate).toBe(true);
    expect(rules.choices.map((c) => c.value)).toEqual(["1", "7", "30", "90", "never"]);
    expect(DEFAULT_EXPIRY).toBe("30");
    expect(expiryFor(rules, "never", NOW)).toBeNull();
    expect(expiryFor(rules, "1", NOW)).toBe(NOW + DAY);
    expect(expiryFor(rules, "90", NOW)).toBe(NOW + 90 * DAY);
  });

  it("an SSO session never offers no expiration, and refuses anything not offered", () => {
    const rules = userRules(session(user, sso(NOW)));
    expect(rules.choices.map((c) => c.value)).toEqual(["1", "7", "30", "90"]);
    expect(expiryFor(rules, "30", NOW)).toBe(NOW + 30 * DAY);
    for (const choice of ["never", "0", "2", "365", "", "30 ", "constructor", "__proto__"])
      expect(expiryFor(rules, choice, NOW), choice).toBeUndefined();
  });

  it("an SSO session creates only within 10 minutes of its provider sign-in", () => {
    expect(userRules(session(user, sso(NOW))).mayCreate).toBe(true);
    expect(userRules(session(user, sso(NOW - FRESH_SIGN_IN_MS + 1))).mayCreate).toBe(true);
    expect(userRules(session(user, sso(NOW - FRESH_SIGN_IN_MS))).mayCreate).toBe(false);
    expect(userRules(session(user, sso(NOW - DAY))).mayCreate).toBe(false);
    // A sign-in time in the future (a clock gone wrong) is not fresh.
    expect(userRules(session(user, sso(NOW + 60_000))).mayCreate).toBe(false);
    expect(FRESH_SIGN_IN_MS).toBe(10 * 60 * 1000);
  });
});
