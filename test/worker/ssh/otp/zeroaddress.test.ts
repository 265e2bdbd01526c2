/**
 * `config/zeroaddress` (Vault's path_config_zeroaddress.go): the cases of Vault's backend_test.go
 * and 5, on mount `ssh-two` so the list never leaks into other files' expectations.
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { removeRole, writeOtpRole, writeRole } from "./helpers";

const M = "ssh-two";

describe("config/zeroaddress", () => {
  it("write, read (three times), role deletion empties it to [], DELETE removes it", async () => {
    const role = uniqueName("zero");
    await writeOtpRole(role, {}, M);
    expect((await vault("GET", `${M}/config/zeroaddress`)).status).toBe(404);

    const write = await vault("POST", `${M}/config/zeroaddress`, { body: { roles: role } });
    expect(write.status).toBe(204);
    for (let i = 0; i < 3; i++) {
      const read = await vault("GET", `${M}/config/zeroaddress`);
      expect(read.status).toBe(200);
      expect(read.json.data).toEqual({ roles: [role] });
    }

    await removeRole(role, M);
    const emptied = await vault("GET", `${M}/config/zeroaddress`);
    expect(emptied.status).toBe(200);
    expect(emptied.json.data).toEqual({ roles: [] });

    expect((await vault("DELETE", `${M}/config/zeroaddress`)).status).toBe(204);
    const gone = await vault("GET", `${M}/config/zeroaddress`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ errors: [] });
  });

  it("an unknown role and an empty list are refused with Vault's messages", async () => {
    const unknown = await vault("POST", `${M}/config/zeroaddress`, { body: { roles: "nope" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({ errors: ['Role "nope" does not exist'] });

    for (const body of [{ roles: "" }, { roles: [] }, {}, { roles: " , " }]) {
      const empty = await vault("POST", `${M}/config/zeroaddress`, { body });
      expect(empty.status).toBe(400);
      expect(empty.json).toEqual({ errors: ["Missing roles"] });
    }
  });

  it("one unknown name among known ones refuses the whole write", async () => {
    const role = uniqueName("known");
    await writeOtpRole(role, {}, M);
    const res = await vault("POST", `${M}/config/zeroaddress`, { body: { roles: [role, "missing-one"] } });
    expect(res.json).toEqual({ errors: ['Role "missing-one" does not exist'] });
  });

  it("a write replaces the list, keeps its order, trims names and does not de-duplicate (Vault's path_config_zeroaddress.go)", async () => {
    const a = uniqueName("b-second");
    const b = uniqueName("a-first");
    await writeOtpRole(a, {}, M);
    await writeOtpRole(b, {}, M);
    await vault("POST", `${M}/config/zeroaddress`, { body: { roles: `${a}, ${b},${a}` } });
    expect((await vault("GET", `${M}/config/zeroaddress`)).json.data).toEqual({ roles: [a, b, a] });
    await vault("POST", `${M}/config/zeroaddress`, { body: { roles: [b] } });
    expect((await vault("GET", `${M}/config/zeroaddress`)).json.data).toEqual({ roles: [b] });
    await vault("DELETE", `${M}/config/zeroaddress`);
  });

  it("any role type may be listed (Vault's path_config_zeroaddress.go)", async () => {
    const ca = uniqueName("ca");
    await writeRole(ca, { key_type: "ca", allow_user_certificates: true }, M);
    expect((await vault("POST", `${M}/config/zeroaddress`, { body: { roles: ca } })).status).toBe(204);
    await vault("DELETE", `${M}/config/zeroaddress`);
  });

  it("DELETE is 204 even when nothing is configured; each mount has its own list (S1)", async () => {
    expect((await vault("DELETE", "ssh/config/zeroaddress")).status).toBe(204);
    const role = uniqueName("own");
    await writeOtpRole(role, {}, M);
    await vault("POST", `${M}/config/zeroaddress`, { body: { roles: role } });
    expect((await vault("GET", "ssh/config/zeroaddress")).status).toBe(404);
    await vault("DELETE", `${M}/config/zeroaddress`);
  });

  it("warns about unknown parameters (Vault's sdk/framework)", async () => {
    const role = uniqueName("warn");
    await writeOtpRole(role, {}, M);
    const res = await vault("POST", `${M}/config/zeroaddress`, { body: { roles: role, extra: 1 } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [extra]"]);
    await vault("DELETE", `${M}/config/zeroaddress`);
  });

  it("list is not an operation of this path (S2a)", async () => {
    expect((await vault("GET", `${M}/config/zeroaddress?list=true`)).status).toBe(405);
    expect((await vault("PATCH", `${M}/config/zeroaddress`, { body: {} })).status).toBe(405);
  });
});
