/**
 * Semantic versions of registry module versions (semver 2.0.0), and the ordering that
 * decision N3's "latest" uses: the highest non-pre-release version among `ok` ones.
 */

/** A parsed semantic version. Numeric parts stay strings (they may exceed 2^53). */
export interface Semver {
  major: string;
  minor: string;
  patch: string;
  /** Dot-separated pre-release identifiers; empty for a release. */
  prerelease: string[];
  /** Build metadata; ignored for precedence. */
  build: string[];
}

const NUMERIC = "0|[1-9]\\d*";
const PRE_ID = `(?:${NUMERIC}|\\d*[A-Za-z-][0-9A-Za-z-]*)`;
const SEMVER_RE = new RegExp(
  `^(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})` +
    `(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?` +
    `(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$`,
);

/** The longest version string we accept. */
export const MAX_VERSION_LENGTH = 128;

/** Parse a semver 2.0.0 string (no leading `v`), or null when it is not one. */
export function parseSemver(text: string): Semver | null {
  if (text.length > MAX_VERSION_LENGTH) return null;
  const m = SEMVER_RE.exec(text);
  if (!m) return null;
  return {
    major: m[1]!,
    minor: m[2]!,
    patch: m[3]!,
    prerelease: m[4] ? m[4].split(".") : [],
    build: m[5] ? m[5].split(".") : [],
  };
}

/** Compare two non-negative decimal strings without leading zeros. */
function compareNumeric(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

const isNumericId = (s: string) => /^\d+$/.test(s);

/** Semver precedence (https://semver.org §11): <0, 0 or >0. Build metadata is ignored. */
export function compareSemver(a: Semver, b: Semver): number {
  for (const key of ["major", "minor", "patch"] as const) {
    const c = compareNumeric(a[key], b[key]);
    if (c !== 0) return c;
  }
  // A release has higher precedence than any of its pre-releases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return a.prerelease.length === b.prerelease.length ? 0 : a.prerelease.length === 0 ? 1 : -1;
  }
  const n = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < n; i++) {
    const x = a.prerelease[i]!;
    const y = b.prerelease[i]!;
    if (x === y) continue;
    const xn = isNumericId(x);
    const yn = isNumericId(y);
    if (xn && yn) return compareNumeric(x, y);
    if (xn !== yn) return xn ? -1 : 1; // numeric identifiers sort before alphanumeric ones
    return x < y ? -1 : 1;
  }
  return a.prerelease.length - b.prerelease.length;
}

/**
 * Compare two version strings for display order: by precedence, then by the text itself
 * (so `1.0.0+a` and `1.0.0+b` have a stable order). Unparsable strings sort first.
 */
export function compareVersionStrings(a: string, b: string): number {
  const pa = parseSemver(a);
  const pb = parseSemver(b);
  if (pa && pb) {
    const c = compareSemver(pa, pb);
    if (c !== 0) return c;
  } else if (pa || pb) {
    return pa ? 1 : -1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * N3: the highest non-pre-release version among `candidates` (which the caller has
 * already restricted to `ok` versions), or null when there is none.
 */
export function pickLatestRelease<T extends { version: string }>(candidates: readonly T[]): T | null {
  let best: T | null = null;
  let bestParsed: Semver | null = null;
  for (const candidate of candidates) {
    const parsed = parseSemver(candidate.version);
    if (!parsed || parsed.prerelease.length > 0) continue;
    if (!bestParsed || compareVersionStrings(candidate.version, best!.version) > 0) {
      best = candidate;
      bestParsed = parsed;
    }
  }
  return best;
}
