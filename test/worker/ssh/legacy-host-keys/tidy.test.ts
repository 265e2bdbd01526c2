/**
 * `DELETE ssh/tidy/dynamic-keys` (Vault's path_cleanup_dynamic_host_keys.go, decision S15):
 * as Vault's backend_test.go, with legacy keys seeded the way a data migration from
 * an older deployment would leave them.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { vault } from "../../../helpers/vault";

async function seedLegacyKeys(mount: string, count: number): Promise<void> {
  const insert = env.DB.prepare("INSERT INTO ssh_legacy_host_keys (mount, name, key, created_at) VALUES (?, ?, ?, ?)");
  await env.DB.batch(
    Array.from({ length: count }, (_, i) =>
      insert.bind(mount, `host-key-${i}`, `legacy-key-material-${i}`, Date.now()),
    ),
  );
}

describe("tidy/dynamic-keys", () => {
  it("a clean mount answers `Removed 0 of 0 host keys.`", async () => {
    const res = await vault("DELETE", "ssh/tidy/dynamic-keys");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ message: "Removed 0 of 0 host keys." });
  });

  it("15 legacy keys are removed (`15 of 15`), then `0 of 0`; other mounts keep theirs", async () => {
    await seedLegacyKeys("ssh", 15);
    await seedLegacyKeys("ssh-two", 3);
    const first = await vault("DELETE", "ssh/tidy/dynamic-keys");
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({ message: "Removed 15 of 15 host keys." });
    expect((await vault("DELETE", "ssh/tidy/dynamic-keys")).json.data).toEqual({
      message: "Removed 0 of 0 host keys.",
    });
    expect((await vault("DELETE", "ssh-two/tidy/dynamic-keys")).json.data).toEqual({
      message: "Removed 3 of 3 host keys.",
    });
  });

  it("only DELETE is an operation of this path (S2a)", async () => {
    expect((await vault("GET", "ssh/tidy/dynamic-keys")).status).toBe(405);
    expect((await vault("POST", "ssh/tidy/dynamic-keys", { body: {} })).status).toBe(405);
  });
});
