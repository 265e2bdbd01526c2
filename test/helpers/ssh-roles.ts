/**
 * Role helpers of the /v1 role tests (test/worker/ssh/roles*.test.ts): write and read a
 * role through the API, and the smallest CA role body.
 */
import { vault } from "./vault";

/** The smallest CA role body a sign accepts for user certificates. */
export const CA_ROLE = { key_type: "ca", allow_user_certificates: true };

/** `POST <mount>/roles/<name>`. */
export async function writeRole(name: string, body: Record<string, unknown>, mount = "ssh") {
  return vault("POST", `${mount}/roles/${name}`, { body });
}

/** `GET <mount>/roles/<name>`. */
export async function readRole(name: string, mount = "ssh") {
  return vault("GET", `${mount}/roles/${name}`);
}
