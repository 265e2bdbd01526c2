/**
 * End to end (decision B17): the real Worker and OpenSSH's own KRL reader. A certificate is
 * revoked by serial; its issuer is deleted and the same key pair imported again (a restore
 * from backup, with the public key pasted with a leading space and CRLF); `ssh-keygen -Q`
 * over the KRL the Worker then serves must still say REVOKED, while a certificate that was
 * never revoked stays ok. Needs ssh-keygen; never skips (B7).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vaultOk } from "../../support/client";
import { findBinary, OpensshSandbox } from "../../support/openssh";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { fixtureText } from "../../unit/lib/support/fixtures";

const MOUNT = "ssh";
const CA_PRIVATE = fixtureText("keys/ed25519");
const CA_PUBLIC = fixtureText("keys/ed25519.pub");

let keyway: RunningKeyway;
let box: OpensshSandbox;

let keys = 0;
async function certificate(role: string): Promise<{ certPath: string; serial: string }> {
  const keyPath = box.path(`key-${++keys}`);
  const gen = await box.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "reimport", "-f", keyPath]);
  expect(gen.code, gen.stderr).toBe(0);
  const signed = await vaultOk(keyway, "POST", `${MOUNT}/sign/${role}`, {
    public_key: await readFile(`${keyPath}.pub`, "utf8"),
  });
  const certPath = await box.write(`${path.basename(keyPath)}-cert.pub`, signed.json.data.signed_key, 0o644);
  return { certPath, serial: signed.json.data.serial_number };
}

/** `ssh-keygen -Q` of a certificate against the KRL the Worker serves now. */
async function query(certPath: string): Promise<{ code: number | null; stdout: string }> {
  const res = await fetch(`${keyway.url}/v1/${MOUNT}/krl`);
  expect(res.status).toBe(200);
  expect(res.headers.get("Keyway-KRL-Stale")).toBeNull();
  const krl = await box.write(`krl-${crypto.randomUUID()}`, new Uint8Array(await res.arrayBuffer()), 0o644);
  const r = await box.sshKeygen(["-Q", "-f", krl, certPath]);
  return { code: r.code, stdout: r.stdout + r.stderr };
}

beforeAll(async () => {
  findBinary("ssh-keygen");
  keyway = await startKeyway({ SSH_MOUNTS: MOUNT });
  box = await OpensshSandbox.create("keyway-krl-reimport-");
}, 180_000);

afterAll(async () => {
  await box?.dispose();
  await keyway?.stop();
});

describe("B17: delete + re-import keeps a revoked certificate revoked", () => {
  it("ssh-keygen -Q says REVOKED before and after the issuer is deleted and imported again", async () => {
    await vaultOk(keyway, "POST", `${MOUNT}/issuers/import/original`, {
      private_key: CA_PRIVATE,
      public_key: CA_PUBLIC,
    });
    await vaultOk(keyway, "POST", `${MOUNT}/roles/reimport`, {
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      default_user: "someone",
      ttl: "10m",
    });
    const revoked = await certificate("reimport");
    const kept = await certificate("reimport");
    expect((await query(revoked.certPath)).code).toBe(0);

    await vaultOk(keyway, "POST", `${MOUNT}/revoke`, { serial_number: revoked.serial });
    let q = await query(revoked.certPath);
    expect(q.stdout).toMatch(/REVOKED/);
    expect(q.code).not.toBe(0);
    expect((await query(kept.certPath)).code).toBe(0);

    // A restore from backup: the same pair under a new issuer id, pasted untidily.
    await vaultOk(keyway, "DELETE", `${MOUNT}/issuer/original`);
    await vaultOk(keyway, "POST", `${MOUNT}/issuers/import/restored`, {
      private_key: CA_PRIVATE,
      public_key: ` ${CA_PUBLIC.trim()}\r\n`,
    });
    q = await query(revoked.certPath);
    expect(q.stdout).toMatch(/REVOKED/);
    expect(q.code).not.toBe(0);
    const fresh = await query(kept.certPath);
    expect(fresh.code, fresh.stdout).toBe(0);
  });
});
