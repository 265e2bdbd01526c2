/**
 * The auth mount a request under `auth/<mount>/…` addresses (decision S24).
 */
import { unsupportedPath } from "../errors";
import type { VaultRequest } from "../router";
import type { AuthMount } from "./model";
import { findAuthMount } from "./repo";

/**
 * S24's path grammar: lower-case segments of `[a-z0-9][a-z0-9_-]*` joined by `/`, at most
 * 64 characters (checked where mounts are enabled).
 */
export const AUTH_MOUNT_PATTERN = "[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_-]*)*";

/** The mount named by the request's `:mount` parameter; 404 `unsupported path` when none is enabled there. */
export async function requireAuthMount(req: VaultRequest): Promise<AuthMount> {
  const mount = await findAuthMount(req.db, req.params.mount ?? "");
  if (!mount) throw unsupportedPath();
  return mount;
}
