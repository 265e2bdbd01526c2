/**
 * End to end (decision S23): the real Worker, host/keyway-krl-sync and a real sshd whose
 * `RevokedKeys` is the synced file. Three certificates log in; one is revoked by serial,
 * one by key id, and the subject key of the third; after a sync all three are refused
 * while a fresh certificate for another key logs in. Deleting a revocation lets its
 * certificate in again after the next sync.
 *
 * Needs sshd, ssh-keygen and curl; fails with an install hint otherwise, never skips (B7).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vault, vaultOk } from "../../support/client";
import { findBinary, OpensshSandbox, runCommand } from "../../support/openssh";
import { loginUser, type RunningSshd, sshLogin, startSshd } from "../../support/sshd";
import { type RunningKeyway, startKeyway } from "../../support/worker";

const SYNC = path.resolve(import.meta.dirname, "../../../host/keyway-krl-sync");
const USER = loginUser();
const MOUNT = "ssh";

let keyway: RunningKeyway;
let sshd: RunningSshd;
let client: OpensshSandbox;
let host: OpensshSandbox;
let role: string;

const krlFile = () => host.path("keyway.krl");

async function sync() {
  const res = await runCommand(SYNC, [`${keyway.url}/v1/${MOUNT}/krl`, krlFile()], { env: { PATH: process.env.PATH } });
  expect(res.code, res.stderr).toBe(0);
}

let keyCounter = 0;

/** A fresh Ed25519 key with a certificate from the role; returns the paths and the sign answer. */
async function certifiedKey(keyId?: string) {
  const keyPath = client.path(`key-${++keyCounter}`);
  const gen = await client.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "krl-e2e", "-f", keyPath]);
  expect(gen.code, gen.stderr).toBe(0);
  const publicKey = await readFile(`${keyPath}.pub`, "utf8");
  const signed = await vaultOk(keyway, "POST", `${MOUNT}/sign/${role}`, {
    public_key: publicKey,
    ...(keyId ? { key_id: keyId } : {}),
  });
  const certPath = `${keyPath}-cert.pub`;
  await client.write(path.basename(certPath), signed.json.data.signed_key, 0o644);
  return { keyPath, certPath, publicKey, serial: signed.json.data.serial_number as string };
}

async function login(key: { keyPath: string; certPath: string }) {
  return sshLogin(client, { port: sshd.port, identityFile: key.keyPath, certificateFile: key.certPath });
}

beforeAll(async () => {
  findBinary("curl", "curl");
  keyway = await startKeyway({ SSH_MOUNTS: MOUNT });
  client = await OpensshSandbox.create("keyway-krl-client-");
  host = await OpensshSandbox.create("keyway-krl-host-");
  await vaultOk(keyway, "POST", `${MOUNT}/config/ca`, { key_type: "ed25519" });
  role = "krl-login";
  await vaultOk(keyway, "POST", `${MOUNT}/roles/${role}`, {
    key_type: "ca",
    allow_user_certificates: true,
    allow_user_key_ids: true,
    allowed_users: USER,
    default_user: USER,
    ttl: "10m",
    store_certificates: true,
  });
  // The operator's order (host/README.md): install the (empty) KRL, then enable RevokedKeys.
  await sync();
  const caKey = (await vault(keyway, "GET", `${MOUNT}/public_key`, undefined, null)).text;
  sshd = await startSshd({
    trustedUserCaKeys: caKey.endsWith("\n") ? caKey : `${caKey}\n`,
    extraConfig: [`RevokedKeys ${krlFile()}`],
  });
}, 180_000);

afterAll(async () => {
  await sshd?.stop();
  await client?.dispose();
  await host?.dispose();
  await keyway?.stop();
});

describe("RevokedKeys fed by keyway-krl-sync", () => {
  it("refuses certificates revoked by serial, key id and subject key; lets a deleted revocation's certificate in again", async () => {
    const bySerial = await certifiedKey();
    const byKeyId = await certifiedKey("contractor-laptop 42");
    const byKey = await certifiedKey();
    for (const key of [bySerial, byKeyId, byKey]) {
      const res = await login(key);
      expect(res.code, res.stderr).toBe(0);
    }

    const serialRevocation = await vaultOk(keyway, "POST", `${MOUNT}/revoke`, { serial_number: bySerial.serial });
    await vaultOk(keyway, "POST", `${MOUNT}/revoke`, { key_id: "contractor-laptop 42" });
    await vaultOk(keyway, "POST", `${MOUNT}/revoke`, { public_key: byKey.publicKey });
    const before = await readFile(krlFile());
    await sync();
    expect(await readFile(krlFile())).not.toEqual(before);

    for (const [label, key] of [
      ["serial", bySerial],
      ["key id", byKeyId],
      ["subject key", byKey],
    ] as const) {
      const mark = sshd.log().length;
      const res = await login(key);
      expect(res.code, `${label} still logs in`).toBe(255);
      expect(sshd.logSince(mark)).toMatch(/revoked/i);
    }
    const fresh = await certifiedKey();
    expect((await login(fresh)).code).toBe(0);

    // Deleting the serial revocation: that certificate logs in again after the next sync.
    expect(
      (await vault(keyway, "DELETE", `${MOUNT}/revocation/${serialRevocation.json.data.revocation_id}`)).status,
    ).toBe(204);
    expect((await login(bySerial)).code, "before the sync the host still has the old KRL").toBe(255);
    await sync();
    expect((await login(bySerial)).code).toBe(0);
    expect((await login(byKeyId)).code).toBe(255);
    expect((await login(byKey)).code).toBe(255);
  });
});
