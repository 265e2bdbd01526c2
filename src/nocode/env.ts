/**
 * The Hono environment of /api/v2: the platform's (../app-env.ts) plus the caller the
 * token check in ./app.ts found, and the request's one D1 handle `db` (set by ./app.ts for
 * every /api/v2 request, so no handler or service builds a second). Feature routes import
 * it from here, never from ./app.ts, so no feature depends on the file that mounts them all.
 */
import type { AppEnv } from "../app-env";
import type { Db } from "../db/client";
import type { NocodeCaller } from "./access/auth";
import type { OrgPermission } from "./access/permissions";

export type NocodeEnv = AppEnv & {
  Variables: AppEnv["Variables"] & {
    caller: NocodeCaller;
    db: Db;
    /** Set by a route declaring `rights(…, { cache: "unchanged" })` (./route-rights.ts): ./app.ts then keeps the cache. */
    cacheUnchanged?: true;
    /** Set by `rights(…)` (./route-rights.ts): the caller's rights in the organization its check was made in. */
    orgRights: ReadonlySet<OrgPermission>;
    /** Set by `rights(…, { scope })`: what the path addresses, with its scope; read it with the scope's `of(c)`. */
    resource?: unknown;
  };
};
