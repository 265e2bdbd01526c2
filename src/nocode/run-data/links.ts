/**
 * The signed links of run data (decisions N20, B23): the state download
 * (`hosted-state-download-url`), the JSON plan behind `json-output`'s 307, and
 * `log-read-url`. Each is an HMAC over (purpose, id, expiry) made by the one helper
 * (src/lib/crypto/signed-link.ts) under a purpose of its own, so a link of one kind never
 * opens another; docs/signed-links.md lists them.
 */
import { SIGNED_LINK_HEADERS, signLink, verifySignedLink } from "../../lib/crypto/signed-link";
import { nocodeErrorResponse, notFound } from "../errors";

/** The kinds of run-data links, their purposes and their longest lifetime (B23). */
export const RUN_DATA_LINKS = {
  /** A state version's bytes: 60 s. */
  state: { purpose: "state-download", maxLifetimeSeconds: 60 },
  /** A plan's JSON output: 60 s. */
  jsonPlan: { purpose: "json-plan-download", maxLifetimeSeconds: 60 },
  /**
   * A phase's log: until one hour after the phase ends; for a phase still running, until one
   * hour after its job's time limit (N18) would end it. The bound here is the longest such
   * lifetime a deployment can configure (the job limits are vars).
   */
  log: { purpose: "log-read", maxLifetimeSeconds: 8 * 24 * 3600 },
} as const;

export type RunDataLinkKind = keyof typeof RUN_DATA_LINKS;

/** Where each link kind is served, below /api/v2 (N2a exempts these paths from the token check). */
export const SIGNED_PATHS = {
  state: (id: string) => `/api/v2/signed/state-versions/${id}`,
  jsonPlan: (id: string) => `/api/v2/signed/plans/${id}/json-output`,
  log: (id: string) => `/api/v2/signed/logs/${id}`,
} as const satisfies Record<RunDataLinkKind, (id: string) => string>;

/** A signed link of `kind` to `id`, valid `lifetimeSeconds` from now. */
export async function runDataLink(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  origin: string,
  kind: RunDataLinkKind,
  id: string,
  lifetimeSeconds: number,
  now = Date.now(),
): Promise<string> {
  const { purpose } = RUN_DATA_LINKS[kind];
  const { expiry, signature } = await signLink(env.KEYWAY_HASH_KEY, { purpose, id }, now, lifetimeSeconds);
  return `${origin}${SIGNED_PATHS[kind](id)}?expires=${expiry}&signature=${signature}`;
}

/** Whether a request's `expires` and `signature` open `id` as a link of `kind` now. */
export async function runDataLinkValid(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  kind: RunDataLinkKind,
  id: string,
  query: { expires?: string; signature?: string },
  now = Date.now(),
): Promise<boolean> {
  const { purpose, maxLifetimeSeconds } = RUN_DATA_LINKS[kind];
  const verdict = await verifySignedLink(
    env.KEYWAY_HASH_KEY,
    { purpose, id },
    query.expires ?? "",
    query.signature ?? "",
    now,
    maxLifetimeSeconds,
  );
  return verdict.ok;
}

/** B23: the answer to a refused signed link (bad, expired, other purpose, or nothing there): 404 with B23's headers. */
export function signedLinkRefused(): Response {
  const res = nocodeErrorResponse(notFound());
  for (const [name, value] of Object.entries(SIGNED_LINK_HEADERS)) res.headers.set(name, value);
  return res;
}
