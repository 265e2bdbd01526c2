/**
 * Versions and version constraints in Terraform's grammar (decision N6), with the
 * semantics of hashicorp/go-version, which Terraform uses for `required_version`:
 *
 * - a version is `N[.N]*` with an optional `-prerelease` and `+metadata`, and an optional
 *   leading `v`; fewer than three numeric segments are padded with zeros;
 * - a constraint is a comma-separated conjunction of `[op] version`, op one of
 *   `=`, `!=`, `>`, `>=`, `<`, `<=`, `~>` (none means `=`), spaces allowed around each;
 * - `~> X.Y` allows `>= X.Y` within the same X; `~> X.Y.Z` allows `>= X.Y.Z` within X.Y;
 *   `~> X` allows anything `>= X` (go-version keeps no upper bound for one segment);
 * - a pre-release only satisfies a constraint that names a pre-release of the same
 *   X.Y.Z, and `~>` never mixes pre-releases with releases.
 *
 * Pure code: no D1, no Hono.
 */

/** A parsed version. */
export interface Version {
  /** Numeric segments, padded to at least three. */
  segments: number[];
  /** How many segments were written (`1.5` → 2). */
  specified: number;
  /** Pre-release text without the dash; "" for a release. */
  prerelease: string;
  /** The text as given, trimmed. */
  original: string;
}

export type ConstraintOperator = "=" | "!=" | ">" | ">=" | "<" | "<=" | "~>";

/** One `op version` term of a constraint. */
export interface ConstraintTerm {
  operator: ConstraintOperator;
  version: Version;
}

const IDENT = "[0-9A-Za-z~-]+";
// Numeric segments, then `-prerelease`, then `+metadata` (go-version also accepts a
// dashless `1.0beta`; Terraform never writes that form, so we do not).
const VERSION_SOURCE = `v?([0-9]+(?:\\.[0-9]+)*)(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+(${IDENT}(?:\\.${IDENT})*))?`;
const VERSION = new RegExp(`^${VERSION_SOURCE}$`);
// Decision B9: applied to a trimmed term, so no two `\s*` can share a run of spaces
// (`^\s*(op)?\s*…\s*$` took quadratic time on `1.0,` + a million spaces + `x`).
const TERM = new RegExp(`^(=|!=|>=|<=|>|<|~>)?\\s*(${VERSION_SOURCE})$`);

/** Decision B9: the longest version constraint accepted (longer ones are refused unparsed). */
export const MAX_CONSTRAINT_LENGTH = 256;

/** A strict release number `X.Y.Z` with an optional `-prerelease` (the form stored in the release list). */
export const EXACT_VERSION = /^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Parse a version, or null. */
export function parseVersion(text: string): Version | null {
  const trimmed = text.trim();
  const m = VERSION.exec(trimmed);
  if (!m) return null;
  const written = m[1]!.split(".");
  if (written.length > 8) return null;
  const segments = written.map(Number);
  if (segments.some((s) => !Number.isSafeInteger(s))) return null;
  const specified = segments.length;
  while (segments.length < 3) segments.push(0);
  return { segments, specified, prerelease: m[2] ?? "", original: trimmed };
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return 1;
  if (b === "") return -1;
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^[0-9]+$/.test(x);
    const yn = /^[0-9]+$/.test(y);
    if (xn && yn) return Number(x) < Number(y) ? -1 : 1;
    if (xn) return -1;
    if (yn) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Order two versions (metadata ignored): negative, zero or positive. */
export function compareVersions(a: Version, b: Version): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] ?? 0;
    const y = b.segments[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return comparePrerelease(a.prerelease, b.prerelease);
}

/** Parse a constraint (`~> 1.5`, `>= 1.3, < 1.6`, `1.5.7`, …), or null when it is not valid. */
export function parseConstraint(text: string): ConstraintTerm[] | null {
  if (text.length > MAX_CONSTRAINT_LENGTH || text.trim() === "") return null;
  const terms: ConstraintTerm[] = [];
  for (const part of text.split(",")) {
    const m = TERM.exec(part.trim());
    if (!m) return null;
    const version = parseVersion(m[2]!);
    if (!version) return null;
    terms.push({ operator: (m[1] as ConstraintOperator | undefined) ?? "=", version });
  }
  return terms;
}

function samePrefix(v: Version, c: Version, length: number): boolean {
  for (let i = 0; i < length; i++) if ((v.segments[i] ?? 0) !== (c.segments[i] ?? 0)) return false;
  return true;
}

/** go-version's pre-release rule for the comparison operators. */
function prereleaseAllowed(v: Version, c: Version): boolean {
  if (v.prerelease !== "" && c.prerelease !== "")
    return samePrefix(v, c, Math.max(v.segments.length, c.segments.length));
  if (v.prerelease !== "" && c.prerelease === "") return false;
  return true;
}

/** Whether `v` satisfies one term. */
export function satisfiesTerm(v: Version, term: ConstraintTerm): boolean {
  const c = term.version;
  const cmp = compareVersions(v, c);
  switch (term.operator) {
    case "=":
      return cmp === 0;
    case "!=":
      return cmp !== 0;
    case ">":
      return prereleaseAllowed(v, c) && cmp > 0;
    case ">=":
      return prereleaseAllowed(v, c) && cmp >= 0;
    case "<":
      return prereleaseAllowed(v, c) && cmp < 0;
    case "<=":
      return prereleaseAllowed(v, c) && cmp <= 0;
    case "~>": {
      if ((c.prerelease === "") !== (v.prerelease === "")) return false;
      if (cmp < 0) return false;
      // Every written segment but the last must match; the last may grow.
      return samePrefix(v, c, c.specified - 1);
    }
  }
}

/** Whether `v` satisfies every term of a constraint. */
export function satisfies(v: Version, constraint: ConstraintTerm[]): boolean {
  return constraint.every((term) => satisfiesTerm(v, term));
}
