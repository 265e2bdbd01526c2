/**
 * The Hono environment of /api/v2: the platform's (../app-env.ts) plus the caller the
 * token check in ./app.ts found. Feature routes import it from here, never from ./app.ts,
 * so no feature depends on the file that mounts them all.
 */
import type { AppEnv } from "../app-env";
import type { NocodeCaller } from "./auth";

export type NocodeEnv = AppEnv & { Variables: AppEnv["Variables"] & { caller: NocodeCaller } };
