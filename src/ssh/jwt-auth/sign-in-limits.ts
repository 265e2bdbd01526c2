/**
 * S28's per-address rate limit on the unauthenticated sign-in paths of an auth mount
 * (`login`, `oidc/auth_url`, both callbacks), counted in the mount's B21 store. Checked once
 * the mount is known to exist, so requests to paths that name no mount create no counter.
 */
import { clientAddressKey, type SignInScope, signInStore } from "../../platform/sign-in";
import type { SignInStore } from "../../platform/sign-in-store";
import { tooManyRequests, unsupportedPath } from "../errors";
import type { VaultRequest } from "../router";
import type { AuthMount } from "./model";
import { type LoginContext, loadLoginContext } from "./repo";

/** The B21 store of an auth mount: keyed by its accessor, so a re-enabled mount starts afresh. */
export function mountSignInStore(env: Env, mount: Pick<AuthMount, "accessor">): DurableObjectStub<SignInStore> {
  const scope: SignInScope = `ssh:${mount.accessor}`;
  return signInStore(env, scope);
}

/**
 * Count this request against its client address and mount; 429 in Vault's format past 60 a
 * minute (S28).
 * @throws VaultError 429 `request path "<path>": rate limit quota exceeded`
 */
export async function enforceSignInRate(
  req: { env: Env; headers: Headers; path: string },
  mount: AuthMount,
): Promise<void> {
  const result = await mountSignInStore(req.env, mount).hit(clientAddressKey(req.headers));
  if (!result.ok && result.error === "limited") throw tooManyRequests(req.path, result.retryAfterSeconds);
}

/**
 * The mount a sign-in path names (`req.params.mount`), its config and the role `roleName` (or
 * the config's `default_role` when empty), once the request has counted against S28's limit.
 * @throws VaultError 404 `unsupported path` when no mount is there; 429 past the limit
 */
export async function signInContext(req: VaultRequest, roleName: string): Promise<LoginContext> {
  const context = await loadLoginContext(req.db, req.params.mount ?? "", roleName);
  if (!context) throw unsupportedPath();
  await enforceSignInRate(req, context.mount);
  return context;
}
