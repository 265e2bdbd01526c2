/**
 * Run data at rest (decision N20 "At rest"): each object is in R2 encrypted under its own
 * data key, never in the clear; the data key is in D1 wrapped under KEYWAY_KEK and listed
 * for B11's rewrap; an object swapped for another's bytes does not decrypt.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ENCRYPTED_COLUMNS } from "../../../../src/db/secrets-at-rest";
import { encryptedLength } from "../../../../src/lib/crypto/segments";
import { readRunData, storeRunDataBytes } from "../../../../src/nocode/agents/run-data";

const text = (s: string) => new TextEncoder().encode(s);

describe("run data at rest (N20)", () => {
  it("stores ciphertext only, under a per-object key wrapped under the KEK", async () => {
    const plain = text(`{"serial":1,"lineage":"l","secret":"${"x".repeat(70_000)}"}`);
    const a = await storeRunDataBytes(env, "state", plain);
    const b = await storeRunDataBytes(env, "state", plain);
    expect(a.dataKeyEncrypted).toMatch(/^v1\.t1\./);
    expect(a.dataKeyEncrypted).not.toBe(b.dataKeyEncrypted);
    const raw = new Uint8Array(await (await env.RUN_DATA.get(a.r2Key))!.arrayBuffer());
    expect(raw.length).toBe(encryptedLength(plain.length));
    expect(new TextDecoder().decode(raw)).not.toContain("secret");
    expect(await readRunData(env, a)).toEqual(plain);
    // Another object's bytes under this object's key do not decrypt.
    await env.RUN_DATA.put(a.r2Key, await (await env.RUN_DATA.get(b.r2Key))!.arrayBuffer());
    await expect(readRunData(env, a)).rejects.toThrow();
  });

  it("lists data keys and run inputs for B11's rewrap", () => {
    const listed = ENCRYPTED_COLUMNS.map((c) => `${c.table}.${c.column}:${c.context("id")}`);
    expect(listed).toContain("run_data_objects.data_key_encrypted:data-key:id");
    expect(listed).toContain("runs.agent_inputs:run-inputs:id");
  });
});
