/**
 * `POST|PUT <mount>/verify` (Vault's path_verify.go, decisions S13 and S16):
 * unauthenticated, verify-once. `verify-echo-request` is the helper's health check.
 */
import { badRequest } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson } from "../respond";
import type { VaultRequest } from "../router";
import { OTP_PATTERN, otpHash, otpStore, shardOf } from "./shard";

/** The fields `verify` takes. */
export const VERIFY_FIELDS = { otp: { type: "string" } } as const;

export async function verifyHandler(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, VERIFY_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  const otp = f.values.otp as string;
  if (otp === "verify-echo-request") return vaultJson(req, { data: { message: "verify-echo-response" }, warnings });
  // Every OTP we issue has the UUID shape, so nothing else can be stored: answer at once
  // without a Durable Object round trip (the answer is the one Vault gives).
  if (!OTP_PATTERN.test(otp)) throw badRequest("OTP not found");
  const hash = await otpHash(req.env, req.mount, otp);
  const result = await otpStore(req.env, req.mount, shardOf(hash)).consume(hash);
  if (!result.ok) throw badRequest("OTP not found");
  const { username, ip, roleName } = result.value;
  return vaultJson(req, { data: { username, ip, role_name: roleName }, warnings });
}
