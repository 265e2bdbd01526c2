/**
 * Migration 0009 (decision S20): each mount's CA, stored in the old single-CA shape
 * (`ssh_ca`, private key encrypted under `ssh-ca:<mount>`), becomes that mount's default
 * issuer with no change a client can see: `public_key`, `config/ca` and sign answer as
 * before, and roles stored before `issuer_ref` existed sign with it.
 *
 * The test puts this file's database back in the pre-0009 shape (0000's `ssh_ca` DDL,
 * taken from the migration files themselves), fills it with old rows, and runs 0009's
 * statements exactly as wrangler would.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bytesEqual } from "../../../../src/lib/bytes";
import { encryptSecret } from "../../../../src/lib/crypto/kek";
import { rewriteStoredKeys } from "../../../../src/ssh/stored-keys";
import { uniqueName, vault } from "../../../helpers/vault";
import { blobOf, CA_KEYS, decodeSignedKey, SUBJECT_KEYS } from "../ca-fixtures";

function migration(prefix: string) {
  const found = env.TEST_MIGRATIONS.find((m) => m.name.startsWith(prefix));
  if (!found) throw new Error(`migration ${prefix} not found`);
  return found;
}

/** Back to the shape before 0009: no issuer tables, 0000's ssh_ca table. */
async function restorePre0009Schema(): Promise<void> {
  const createCa = migration("0000").queries.find((q) => q.includes("CREATE TABLE `ssh_ca`"));
  if (!createCa) throw new Error("0000 has no ssh_ca DDL");
  await env.DB.batch([
    env.DB.prepare("DROP TABLE ssh_issuers"),
    env.DB.prepare("DROP TABLE ssh_issuer_config"),
    env.DB.prepare(createCa.replace(/-->\s*statement-breakpoint\s*$/, "")),
  ]);
}

describe("migration 0009: the existing CA becomes the default issuer, invisibly", () => {
  it("keeps public_key, config/ca and sign unchanged, for roles stored before issuer_ref", async () => {
    // A role written and then stored as before S20 (no issuerRef in its JSON).
    const roleName = uniqueName("old-role");
    const written = await vault("POST", `ssh/roles/${roleName}`, {
      body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", ttl: "10m" },
    });
    expect(written.status).toBe(204);
    await env.DB.prepare(
      "UPDATE ssh_roles SET config = json_remove(config, '$.issuerRef') WHERE mount = 'ssh' AND name = ?",
    )
      .bind(roleName)
      .run();

    await restorePre0009Schema();
    const createdAt = 1_700_000_000_000;
    const ciphertext = await encryptSecret(env.KEYWAY_KEK, "ssh-ca:ssh", CA_KEYS.ed25519.privateKey);
    await env.DB.prepare(
      "INSERT INTO ssh_ca (mount, public_key, private_key_encrypted, key_type, created_at) VALUES ('ssh', ?, ?, 'ssh-ed25519', ?)",
    )
      .bind(CA_KEYS.ed25519.publicKey, ciphertext, createdAt)
      .run();

    for (const query of migration("0009").queries) await env.DB.prepare(query).run();

    // The old table is gone; the issuer carries the same key text and ciphertext.
    const tables = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ssh_ca'",
    ).all();
    expect(tables.results).toEqual([]);
    const rows = await env.DB.prepare("SELECT * FROM ssh_issuers").all<Record<string, unknown>>();
    expect(rows.results).toHaveLength(1);
    const row = rows.results[0]!;
    expect(row).toMatchObject({
      mount: "ssh",
      name: null,
      public_key: CA_KEYS.ed25519.publicKey,
      private_key_encrypted: ciphertext,
      key_type: "ssh-ed25519",
      trusted: 1,
      created_at: createdAt,
    });
    expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // What clients see.
    const pub = await vault("GET", "ssh/public_key", { token: null });
    expect(pub.status).toBe(200);
    expect(pub.text).toBe(CA_KEYS.ed25519.publicKey.trim());
    expect((await vault("GET", "ssh/config/ca")).json.data).toEqual({ public_key: CA_KEYS.ed25519.publicKey.trim() });
    const signed = await vault("POST", `ssh/sign/${roleName}`, {
      body: { public_key: SUBJECT_KEYS.ecdsa256, valid_principals: "alice" },
    });
    expect(signed.status).toBe(200);
    expect(signed.json.data.issuer_id).toBe(row.id);
    expect(
      bytesEqual(decodeSignedKey(signed.json.data.signed_key).signatureKey, blobOf(CA_KEYS.ed25519.publicKey)),
    ).toBe(true);
    expect((await vault("GET", `ssh/roles/${roleName}`)).json.data.issuer_ref).toBe("default");

    // The issuer API shows it as the default, unnamed and trusted; the other mount has none.
    const list = await vault("GET", "ssh/issuers?list=true");
    expect(list.json.data.key_info[row.id as string]).toEqual({
      issuer_name: "",
      is_default: true,
      public_key: CA_KEYS.ed25519.publicKey.trim(),
      trusted: true,
    });
    expect((await vault("GET", "ssh-two/issuers?list=true")).status).toBe(404);

    // B17: the row written before canonical keys is read canonical above, and the one-time
    // rewrite stores it canonical; running it again changes nothing.
    expect(await rewriteStoredKeys(env)).toEqual({ issuers: 1, revocations: 0 });
    const rewritten = await env.DB.prepare("SELECT public_key FROM ssh_issuers WHERE id = ?").bind(row.id).first();
    expect(rewritten).toEqual({ public_key: CA_KEYS.ed25519.publicKey.trim() });
    expect(await rewriteStoredKeys(env)).toEqual({ issuers: 0, revocations: 0 });
    expect((await vault("GET", "ssh-two/public_key", { token: null })).status).toBe(404);
  });
});
