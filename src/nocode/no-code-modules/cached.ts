/**
 * A no-code module with its variable options, served from the per-isolate cache
 * (../cache.ts) for E3 and E4: one entry per module, so E4 reads neither the module nor
 * its options from D1 while E3 or an earlier E4 in this isolate has them (issue 19).
 */
import type { Db } from "../../db/client";
import { cachedNocode } from "../cache";
import { findNoCodeModuleWithOptions, type NoCodeModuleWithOptions } from "./repo";

/** The module and its option sets, or undefined when unknown (cached as such for the TTL too). */
export function cachedNoCodeModuleWithOptions(db: Db, id: string): Promise<NoCodeModuleWithOptions | undefined> {
  return cachedNocode(`module:${id}`, () => findNoCodeModuleWithOptions(db, id));
}
