/**
 * OTP leases (decision S13, Vault's secret_otp.go): `sys/leases/revoke`, expiry by Durable
 * Object alarm after the mount's tuned default_lease_ttl (S1), and storage of OTPs only
 * as keyed hashes (B2). Vault's case of a lease revoked, then verified.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { issueOtp, type StoredOtpRow, shardStubFor, writeOtpRole } from "./helpers";

const verify = (otp: string, mount = "ssh") => vault("POST", `${mount}/verify`, { token: null, body: { otp } });
const revoke = (leaseId: string) => vault("PUT", "sys/leases/revoke", { body: { lease_id: leaseId } });

describe("OTP leases", () => {
  it("revoking the lease deletes the OTP; verify then answers `OTP not found`", async () => {
    const role = uniqueName("revoke");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.1" });
    expect((await revoke(creds.lease_id)).status).toBe(204);
    const res = await verify(creds.data.key);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["OTP not found"] });
  });

  it("revocation removes the stored row; revoking again, or after verify, is a silent 204 (Vault's secret_otp.go)", async () => {
    const role = uniqueName("again");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.1" });
    const { stub } = await shardStubFor(creds.data.key);
    const leaseKey = creds.lease_id.split("/").pop();
    const rowsOf = () =>
      runInDurableObject(stub, (_instance, state) =>
        state.storage.sql.exec<StoredOtpRow>("SELECT * FROM otps WHERE lease_key = ?", leaseKey).toArray(),
      );
    expect(await rowsOf()).toHaveLength(1);
    expect((await revoke(creds.lease_id)).status).toBe(204);
    expect(await rowsOf()).toHaveLength(0);
    expect((await revoke(creds.lease_id)).status).toBe(204);

    const other = await issueOtp(role, { ip: "10.0.0.2" });
    expect((await verify(other.data.key)).status).toBe(200);
    expect((await revoke(other.lease_id)).status).toBe(204);
  });

  it("a lease id naming another role, or a malformed lease key, revokes nothing", async () => {
    const role = uniqueName("owner");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.1" });
    const leaseKey = creds.lease_id.split("/").pop();
    expect((await revoke(`ssh/creds/someone-else/${leaseKey}`)).status).toBe(204);
    expect((await revoke(`ssh-two/creds/${role}/${leaseKey}`)).status).toBe(204);
    expect((await revoke(`ssh/creds/${role}/zz${leaseKey.slice(2)}`)).status).toBe(204);
    expect((await revoke(`ssh/creds/${role}/short`)).status).toBe(204);
    expect((await verify(creds.data.key)).status).toBe(200);
  });

  it("B2: the OTP is stored only as its keyed hash, in the shard that hash selects (S13)", async () => {
    const role = uniqueName("hashed");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.3", username: "ubuntu" });
    const otp: string = creds.data.key;
    const { stub, hash } = await shardStubFor(otp);
    const rows = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<StoredOtpRow>("SELECT * FROM otps").toArray(),
    );
    const row = rows.find((r) => r.hash === hash);
    expect(row).toMatchObject({ role_name: role, username: "ubuntu", ip: "10.0.0.3" });
    expect(row!.lease_key).toBe(creds.lease_id.split("/").pop());
    expect(row!.lease_key.slice(0, 2)).toBe(hash.slice(0, 2));
    // Nothing in the shard's storage holds the OTP, in any form a reader could use.
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(otp);
    expect(dump).not.toContain(otp.replace(/-/g, ""));
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("the lease lasts the tuned default_lease_ttl, and the alarm deletes the OTP when it ends (S1, S13)", async () => {
    // ssh-two, so the short TTL does not touch the other tests of this file.
    const tune = await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "2s" } });
    expect(tune.status).toBe(204);
    const role = uniqueName("expiry");
    await writeOtpRole(role, {}, "ssh-two");
    const expiring = await issueOtp(role, { ip: "10.0.0.4" }, "ssh-two");
    expect(expiring.lease_duration).toBe(2);
    const { stub, hash } = await shardStubFor(expiring.data.key, "ssh-two");

    const alarmAt = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarmAt).not.toBeNull();
    expect(alarmAt!).toBeLessThanOrEqual(Date.now() + 2_000);

    await new Promise((resolve) => setTimeout(resolve, 2_200));
    // The alarm may have fired on its own by now; if not, run it. Either way, only the
    // alarm can have deleted the row: nothing else has touched this OTP.
    await runDurableObjectAlarm(stub);
    const left = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT hash FROM otps WHERE hash = ?", hash).toArray(),
    );
    expect(left).toHaveLength(0);
    const res = await verify(expiring.data.key, "ssh-two");
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["OTP not found"] });

    await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "768h" } });
  });

  it("an expired OTP is refused even before the alarm has run", async () => {
    const { stub } = await shardStubFor(crypto.randomUUID());
    const hash = "ab".repeat(32);
    const result = await runInDurableObject(stub, async (instance, state) => {
      // A row whose lease ended a second ago, with no alarm scheduled for it.
      state.storage.sql.exec(
        "INSERT INTO otps (hash, lease_key, role_name, username, ip, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        hash,
        `ab${"x".repeat(22)}`,
        "late",
        "ubuntu",
        "10.0.0.5",
        Date.now() - 1_000,
      );
      return instance.consume(hash);
    });
    expect(result).toEqual({ ok: false, error: "not_found" });
  });

  it("the alarm keeps OTPs that have not expired and wakes again for them", async () => {
    const role = uniqueName("keep");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.6" });
    const { stub, hash } = await shardStubFor(creds.data.key);
    // Run the alarm now, long before the 768h lease ends.
    await runInDurableObject(stub, (instance) => instance.alarm());
    const kept = await runInDurableObject(stub, async (_instance, state) => ({
      rows: state.storage.sql.exec("SELECT hash FROM otps WHERE hash = ?", hash).toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(kept.rows).toHaveLength(1);
    expect(kept.alarm).not.toBeNull();
    expect((await verify(creds.data.key)).status).toBe(200);
  });

  it("a re-tune does not change leases already granted (S1)", async () => {
    const role = uniqueName("retune");
    await writeOtpRole(role, {}, "ssh-two");
    const before = await issueOtp(role, { ip: "10.0.0.7" }, "ssh-two");
    expect(before.lease_duration).toBe(2764800);
    await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "1s" } });
    const after = await issueOtp(role, { ip: "10.0.0.7" }, "ssh-two");
    expect(after.lease_duration).toBe(1);
    await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "768h" } });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect((await verify(before.data.key, "ssh-two")).status).toBe(200);
    expect((await verify(after.data.key, "ssh-two")).status).toBe(400);
  });
});
