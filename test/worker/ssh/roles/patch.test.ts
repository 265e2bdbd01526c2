/**
 * Role writes (decision S12): POST replaces the whole role, PATCH is a JSON merge patch.
 * Uses the `ssh` mount only.
 */
import { describe, expect, it } from "vitest";
import { CA_ROLE, readRole, writeRole } from "../../../helpers/ssh-roles";
import { uniqueName, vault } from "../../../helpers/vault";

describe("POST is a full replace; PATCH is a JSON merge patch (S12)", () => {
  it("POST replaces: omitted fields return to their defaults", async () => {
    const name = uniqueName("rep");
    await writeRole(name, { ...CA_ROLE, allowed_users: "alice", default_extensions: { "permit-pty": "" } });
    await writeRole(name, { ...CA_ROLE, allowed_users: "bob" });
    const data = (await readRole(name)).json.data;
    expect(data.allowed_users).toBe("bob");
    expect(data.default_extensions).toEqual({});
  });

  it("PATCH merges maps key by key, removes keys set to null, resets null fields, keeps the rest", async () => {
    const name = uniqueName("patch");
    await writeRole(name, {
      ...CA_ROLE,
      allowed_users: "alice",
      ttl: "1h",
      default_extensions: { "permit-pty": "", "permit-agent-forwarding": "" },
      allowed_user_key_lengths: { rsa: [2048] },
    });
    const res = await vault("PATCH", `ssh/roles/${name}`, {
      body: {
        default_extensions: { "permit-agent-forwarding": null, "permit-X11-forwarding": "" },
        allowed_user_key_lengths: { ed25519: 0 },
        ttl: null,
        allow_host_certificates: true,
      },
    });
    expect(res.status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data.default_extensions).toEqual({ "permit-pty": "", "permit-X11-forwarding": "" });
    expect(data.allowed_user_key_lengths).toEqual({ rsa: [2048], ed25519: [0] });
    expect(data.ttl).toBe("0s");
    expect(data.allow_host_certificates).toBe(true);
    expect(data.allowed_users).toBe("alice");
    expect(data.not_before_duration).toBe("30s");
  });

  it("PATCH accepts application/merge-patch+json", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await vault("PATCH", `ssh/roles/${name}`, {
      rawBody: JSON.stringify({ allowed_users: "a,b", port: 2200 }),
      headers: { "Content-Type": "application/merge-patch+json" },
    });
    expect(res.status).toBe(204);
    expect((await readRole(name)).json.data).toEqual({
      key_type: "otp",
      default_user: "u",
      cidr_list: "10.0.0.0/8",
      exclude_cidr_list: "",
      port: 2200,
      allowed_users: "a,b",
    });
  });

  it("PATCH validates the merged role like a write; a failure changes nothing", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { ...CA_ROLE, ttl: "1h", max_ttl: "2h" });
    const before = (await readRole(name)).json.data;
    const tooLong = await vault("PATCH", `ssh/roles/${name}`, { body: { ttl: "3h" } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.errors).toEqual(['"ttl" value must be less than "max_ttl" when both are specified']);
    const noFlags = await vault("PATCH", `ssh/roles/${name}`, { body: { allow_user_certificates: null } });
    expect(noFlags.json.errors).toEqual([
      "Either 'allow_user_certificates' or 'allow_host_certificates' must be set to 'true'",
    ]);
    const badType = await vault("PATCH", `ssh/roles/${name}`, { body: { ttl: "soon" } });
    expect(badType.status).toBe(400);
    expect((await readRole(name)).json.data).toEqual(before);
  });

  it("PATCH warns about unknown fields; PATCH of an absent role is 404", async () => {
    const name = uniqueName("patch");
    await writeRole(name, CA_ROLE);
    const res = await vault("PATCH", `ssh/roles/${name}`, { body: { bogus: 1 } });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual(["Endpoint ignored these unrecognized parameters: [bogus]"]);
    const missing = await vault("PATCH", `ssh/roles/${uniqueName()}`, { body: { ttl: "1h" } });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ errors: [] });
  });

  it("PATCH can change the key type; the result is validated as that type", async () => {
    const name = uniqueName("patch");
    await writeRole(name, { key_type: "otp", default_user: "u", cidr_list: "10.0.0.0/8" });
    const res = await vault("PATCH", `ssh/roles/${name}`, { body: { key_type: "ca", allow_user_certificates: true } });
    expect(res.status).toBe(204);
    const data = (await readRole(name)).json.data;
    expect(data.key_type).toBe("ca");
    expect(data.default_user).toBe("u");
    expect(Object.keys(data)).toHaveLength(26);
  });
});
