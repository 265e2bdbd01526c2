import { describe, expect, it } from "vitest";
import { vault } from "../../../helpers/vault";

describe("sys/mounts/:mount/tune (S1)", () => {
  it("reads 768h defaults as integer seconds and tunes them per mount", async () => {
    const initial = await vault("GET", "sys/mounts/ssh-two/tune");
    expect(initial.json.data).toMatchObject({ default_lease_ttl: 2764800, max_lease_ttl: 2764800 });
    expect(
      (await vault("POST", "sys/mounts/ssh-two/tune", { body: { default_lease_ttl: "1h", max_lease_ttl: 7200 } }))
        .status,
    ).toBe(204);
    const tuned = await vault("GET", "sys/mounts/ssh-two/tune");
    expect(tuned.json.data).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 7200 });
    expect((await vault("GET", "sys/mounts/ssh/tune")).json.data.default_lease_ttl).toBe(2764800);
  });

  it("refuses bad values and unknown mounts, changing nothing", async () => {
    expect((await vault("POST", "sys/mounts/ssh/tune", { body: { default_lease_ttl: "forever" } })).status).toBe(400);
    expect((await vault("POST", "sys/mounts/ssh/tune", { body: { max_lease_ttl: "1000h" } })).status).toBe(400);
    expect(
      (await vault("POST", "sys/mounts/ssh/tune", { body: { default_lease_ttl: "2h", max_lease_ttl: "1h" } })).status,
    ).toBe(400);
    expect((await vault("GET", "sys/mounts/nomount/tune")).status).toBe(400);
    expect((await vault("GET", "sys/mounts/ssh/tune")).json.data.default_lease_ttl).toBe(2764800);
  });
});

describe("sys/leases/revoke (S13, S18)", () => {
  it("answers 204 for sign and issue leases, which record nothing", async () => {
    expect((await vault("PUT", "sys/leases/revoke", { body: { lease_id: "ssh/sign/web/1f2e3d" } })).status).toBe(204);
    expect((await vault("PUT", "sys/leases/revoke", { body: { lease_id: "ssh/issue/web/abc" } })).status).toBe(204);
  });

  it("refuses a missing or malformed lease id", async () => {
    expect((await vault("PUT", "sys/leases/revoke", { body: {} })).status).toBe(400);
    expect((await vault("PUT", "sys/leases/revoke", { body: { lease_id: "kv/data/x" } })).status).toBe(400);
  });
});

describe("envelope (S3)", () => {
  it("carries every field of Vault's envelope with a request id", async () => {
    const res = await vault("GET", "sys/mounts/ssh/tune");
    expect(Object.keys(res.json).sort()).toEqual(
      ["auth", "data", "lease_duration", "lease_id", "renewable", "request_id", "warnings", "wrap_info"].sort(),
    );
    expect(res.json.request_id).toBe(res.headers.get("X-Request-Id"));
    expect(res.json).toMatchObject({
      lease_id: "",
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    });
  });
});
