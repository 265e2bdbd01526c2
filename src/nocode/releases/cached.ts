/**
 * The engine release list (N6) served from the per-isolate cache (../cache.ts) for E4:
 * about 130 rows that every create read and converted (after the token and
 * rights left E4's path, the release list was the largest read left in its batch). Admin
 * release writes (POST/PATCH/DELETE /admin/terraform-versions) clear the cache after they
 * ran, so this isolate sees them at once and every other within the cache's TTL.
 */
import type { Db } from "../../db/client";
import { cachedNocode } from "../cache";
import { loadReleases, type ReleaseCandidate } from "./resolve";

/** Every release of the list, for pickEngineVersion (shared: do not mutate). */
export function cachedReleases(db: Db): Promise<readonly ReleaseCandidate[]> {
  return cachedNocode("releases:all", () => loadReleases(db));
}
