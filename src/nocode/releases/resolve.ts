/**
 * Resolving a workspace's `engine-version` against the release list (decision N6):
 *
 * - omitted (undefined, null, or `latest`) → the newest enabled, non-beta release;
 * - an exact release number (`1.5.7`) → echoed, when that release is listed and enabled
 *   (beta and deprecated releases may be named exactly: naming one is a deliberate
 *   choice, as in HCP Terraform's version picker);
 * - a constraint in Terraform's grammar (`~> 1.5`, `>= 1.3, < 1.6`, `= 1.5.7`, `!= 1.5.0`)
 *   → the newest enabled, non-beta release that satisfies it; deprecated releases still
 *   count;
 * - anything else → a typed failure the caller turns into 422 (`engineVersionError`).
 */
import type { Db } from "../../db/client";
import { invalidAttribute, type NocodeError } from "../errors";
import { releaseCandidates } from "./repo";
import {
  compareVersions,
  EXACT_VERSION,
  MAX_CONSTRAINT_LENGTH,
  parseConstraint,
  parseVersion,
  satisfies,
  type Version,
} from "./version-constraints";

/** A release as the resolver sees it. */
export interface ReleaseCandidate {
  version: string;
  enabled: boolean;
  beta: boolean;
  deprecated: boolean;
}

/** Why an engine version did not resolve. */
export type EngineVersionFailure = "invalid" | "unknown" | "unavailable" | "unsatisfiable" | "no-releases";

/** The outcome of resolving an engine version. */
export type EngineVersionResolution =
  | {
      ok: true;
      /** The concrete release to run. */
      version: string;
      /** What the caller gave, echoed as the workspace attribute: the constraint, the exact version, or the resolved version when omitted. */
      requested: string;
      kind: "default" | "exact" | "constraint";
    }
  | { ok: false; reason: EngineVersionFailure; detail: string };

const usable = (r: ReleaseCandidate) => r.enabled && !r.beta;

function newest(candidates: { release: ReleaseCandidate; parsed: Version }[]): ReleaseCandidate | undefined {
  let best: { release: ReleaseCandidate; parsed: Version } | undefined;
  for (const c of candidates) if (!best || compareVersions(c.parsed, best.parsed) > 0) best = c;
  return best?.release;
}

/** A release list with its release numbers parsed, and the default it resolves to. */
interface ParsedReleases {
  parsed: { release: ReleaseCandidate; parsed: Version }[];
  /** The newest enabled, non-beta release (what an omitted engine version resolves to). */
  newestUsable: ReleaseCandidate | undefined;
}

/**
 * Parsed forms per release list. The list E4 resolves against is the shared one of the
 * per-isolate cache (releases/cached.ts), so it is parsed once per load rather than on
 * every create (parsing about 130 release numbers was 3 % of E4). Lists are
 * never mutated (the cache's rule), so an entry cannot go stale; it goes with its list.
 */
const parsedLists = new WeakMap<readonly ReleaseCandidate[], ParsedReleases>();

function parsedReleases(releases: readonly ReleaseCandidate[]): ParsedReleases {
  let out = parsedLists.get(releases);
  if (!out) {
    const parsed = releases.flatMap((release) => {
      const v = parseVersion(release.version);
      return v ? [{ release, parsed: v }] : [];
    });
    out = { parsed, newestUsable: newest(parsed.filter((c) => usable(c.release))) };
    parsedLists.set(releases, out);
  }
  return out;
}

/** Resolve `input` against `releases` (pure; see the module comment for the rules). */
export function pickEngineVersion(
  releases: readonly ReleaseCandidate[],
  input: string | null | undefined,
): EngineVersionResolution {
  // B9: a length cap before any parsing (422 through engineVersionError).
  if (typeof input === "string" && input.length > MAX_CONSTRAINT_LENGTH) {
    return {
      ok: false,
      reason: "invalid",
      detail: `engine version is longer than ${MAX_CONSTRAINT_LENGTH} characters`,
    };
  }
  const text = typeof input === "string" ? input.trim() : undefined;

  if (text === undefined || text === "latest") {
    const best = parsedReleases(releases).newestUsable;
    if (!best) return { ok: false, reason: "no-releases", detail: "no enabled engine release is available" };
    return { ok: true, version: best.version, requested: best.version, kind: "default" };
  }

  if (EXACT_VERSION.test(text)) {
    const release = releases.find((r) => r.version === text);
    if (!release) return { ok: false, reason: "unknown", detail: `engine version ${text} is not an available release` };
    if (!release.enabled) return { ok: false, reason: "unavailable", detail: `engine version ${text} is disabled` };
    return { ok: true, version: release.version, requested: text, kind: "exact" };
  }

  const constraint = parseConstraint(text);
  if (!constraint) {
    return { ok: false, reason: "invalid", detail: `"${text}" is not a valid engine version or version constraint` };
  }
  const best = newest(
    parsedReleases(releases).parsed.filter((c) => usable(c.release) && satisfies(c.parsed, constraint)),
  );
  if (!best)
    return {
      ok: false,
      reason: "unsatisfiable",
      detail: `no available engine release satisfies the constraint "${text}"`,
    };
  return { ok: true, version: best.version, requested: text, kind: "constraint" };
}

/** Every release of the list, for the resolver. */
export async function loadReleases(db: Db): Promise<ReleaseCandidate[]> {
  return releaseCandidates(db);
}

/** Resolve an engine version against the stored release list (N6). */
export async function resolveEngineVersion(
  db: Db,
  constraintOrExact: string | null | undefined,
): Promise<EngineVersionResolution> {
  return pickEngineVersion(await loadReleases(db), constraintOrExact);
}

/** The 422 `invalid attribute` for a failed resolution (pointer `/data/attributes/<attribute>`). */
export function engineVersionError(failure: { detail: string }, attribute = "engine-version"): NocodeError {
  const detail = failure.detail.charAt(0).toUpperCase() + failure.detail.slice(1);
  return invalidAttribute(attribute, detail);
}

/** Resolve or throw the 422 of N6. */
export async function requireEngineVersion(
  db: Db,
  constraintOrExact: string | null | undefined,
  attribute = "engine-version",
): Promise<Extract<EngineVersionResolution, { ok: true }>> {
  const result = await resolveEngineVersion(db, constraintOrExact);
  if (!result.ok) throw engineVersionError(result, attribute);
  return result;
}
