/**
 * B11: key rotation completes. Secrets written under an older
 * KEYWAY_KEK key are rewrapped under the primary one when read (sign, in waitUntil; a
 * failed rewrap never fails the read) and by `POST /v1/sys/rotate/rewrap` (root or sudo,
 * at most 500 per call, `data.rewrapped` and `data.remaining`); once remaining is 0 the
 * old key can be removed and everything still works. Covers every encrypted column
 * (src/db/secrets-at-rest.ts): the CA key, sensitive workspace vars and the pending vars
 * of upgrade runs. Storage is per test file, so rewrapping here touches no other file.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ENCRYPTED_COLUMNS, REWRAP_BATCH } from "../../../../src/db/secrets-at-rest";
import { handleFetch } from "../../../../src/index";
import { decryptSecret, encryptSecret } from "../../../../src/lib/crypto/kek";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";
import { CA_KEYS, SUBJECT_KEYS } from "../ca-fixtures";

const OLD_KEK = env.KEYWAY_KEK; // "t1:…": what the Worker wrote with so far
const NEW_KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const ROTATED = `n2:${NEW_KEY},${OLD_KEK}`; // the new key first: it encrypts, both decrypt
const NEW_ONLY = `n2:${NEW_KEY}`; // the old key removed

/** Call /v1 as root with another KEYWAY_KEK (and optionally another DB binding). */
async function v1(
  kek: string,
  method: string,
  path: string,
  body?: unknown,
  extra: Partial<Env> = {},
  token: string = env.ROOT_TOKEN,
) {
  const ctx = createExecutionContext();
  const res = await handleFetch(
    new Request(`http://keyway.test/v1/${path}`, {
      method,
      headers: { "X-Vault-Token": token, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }),
    { ...env, KEYWAY_KEK: kek, ...extra },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text, json: text ? JSON.parse(text) : null };
}

async function caCiphertext(mount: string): Promise<string> {
  const row = await env.DB.prepare("SELECT private_key_encrypted AS c FROM ssh_issuers WHERE mount = ?")
    .bind(mount)
    .first<{ c: string }>();
  return row!.c;
}

async function setUpCaAndRole(mount: string): Promise<string> {
  // S20: a key pair the mount already holds would answer 200 with that issuer; start from none.
  expect((await vault("DELETE", `${mount}/config/ca`)).status).toBe(204);
  expect(
    (
      await vault("POST", `${mount}/config/ca`, {
        body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
      })
    ).status,
  ).toBe(204);
  const role = uniqueName("rw");
  const made = await vault("POST", `${mount}/roles/${role}`, {
    body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*" },
  });
  expect(made.status).toBe(204);
  return role;
}

const signBody = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" };

/** Insert sensitive workspace vars encrypted under the old key, as the Worker wrote them before. */
async function insertOldVars(count: number): Promise<Map<string, string>> {
  const plain = new Map<string, string>();
  const statements: D1PreparedStatement[] = [];
  const ws = `ws-${crypto.randomUUID().slice(0, 12)}`;
  for (let i = 0; i < count; i++) {
    const id = `var-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
    const value = `secret-${i}-${crypto.randomUUID()}`;
    plain.set(id, value);
    const ct = await encryptSecret(OLD_KEK, `workspace-var:${id}`, value);
    statements.push(
      env.DB.prepare(
        "INSERT INTO workspace_vars (id, workspace_id, key, category, value, value_encrypted, sensitive_hash, hcl, sensitive, version_id, created_at, updated_at) VALUES (?, ?, ?, 'env', NULL, ?, 'h', 0, 1, 'v', 0, 0)",
      ).bind(id, ws, `K${i}`, ct),
    );
  }
  for (let i = 0; i < statements.length; i += 100) await env.DB.batch(statements.slice(i, i + 100));
  return plain;
}

/** An upgrade run whose pending vars (E5 → E7) hold a sensitive value under the old key. */
async function insertOldPendingRun(): Promise<{ runId: string; varId: string; value: string }> {
  const runId = `run-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const varId = `var-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const value = "pending-secret";
  const configuration = {
    varChanges: [
      {
        id: varId,
        key: "password",
        value: null,
        valueEncrypted: await encryptSecret(OLD_KEK, `workspace-var:${varId}`, value),
        sensitive: true,
        replaces: false,
      },
      { id: "var-plain", key: "region", value: "eu", valueEncrypted: null, sensitive: false, replaces: true },
    ],
  };
  await env.DB.prepare(
    "INSERT INTO runs (id, workspace_id, organization, kind, module_version_id, module_version, configuration, configuration_version_id, engine_version, plan_id, status, created_at, updated_at) VALUES (?, 'ws-x', 'org', 'upgrade', 'mv', '1.0.0', ?, 'cv', '1.9.0', ?, 'planned', 0, 0)",
  )
    .bind(runId, JSON.stringify(configuration), `plan-${runId.slice(4)}`)
    .run();
  return { runId, varId, value };
}

describe("B11: sys/rotate/rewrap", () => {
  it("rewraps every stored secret 500 at a time; then the old key can be removed", async () => {
    const role = await setUpCaAndRole("ssh");
    const vars = await insertOldVars(REWRAP_BATCH + 20);
    const pending = await insertOldPendingRun();
    const total = vars.size + 2; // + the CA key + the pending var

    // Removing the old key now would leave the CA key undecryptable (why the count matters).
    await expect(decryptSecret(NEW_ONLY, "ssh-ca:ssh", await caCiphertext("ssh"))).rejects.toThrow();

    const first = await v1(ROTATED, "POST", "sys/rotate/rewrap");
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({ rewrapped: REWRAP_BATCH, remaining: total - REWRAP_BATCH });
    const second = await v1(ROTATED, "POST", "sys/rotate/rewrap");
    expect(second.json.data).toEqual({ rewrapped: total - REWRAP_BATCH, remaining: 0 });
    expect((await v1(ROTATED, "POST", "sys/rotate/rewrap")).json.data).toEqual({ rewrapped: 0, remaining: 0 });

    // Everything is now under the new key and decrypts with it alone, to the same plaintext.
    expect(await caCiphertext("ssh")).toMatch(/^v1\.n2\./);
    const { results } = await env.DB.prepare("SELECT id, value_encrypted AS c FROM workspace_vars").all<{
      id: string;
      c: string;
    }>();
    expect(results.length).toBe(vars.size);
    for (const row of results) {
      expect(row.c.startsWith("v1.n2.")).toBe(true);
      expect(await decryptSecret(NEW_ONLY, `workspace-var:${row.id}`, row.c)).toBe(vars.get(row.id));
    }
    const run = await env.DB.prepare("SELECT configuration FROM runs WHERE id = ?")
      .bind(pending.runId)
      .first<{ configuration: string }>();
    const changes = JSON.parse(run!.configuration).varChanges;
    expect(await decryptSecret(NEW_ONLY, `workspace-var:${pending.varId}`, changes[0].valueEncrypted)).toBe(
      pending.value,
    );
    expect(changes[1]).toMatchObject({ id: "var-plain", value: "eu", valueEncrypted: null });

    // The old key removed: signing works.
    const signed = await v1(NEW_ONLY, "POST", `ssh/sign/${role}`, signBody);
    expect(signed.status).toBe(200);
    expect(signed.json.data.signed_key).toMatch(/^ssh-ed25519-cert-v01@openssh.com /);
  });

  it("counts secrets under a key KEYWAY_KEK no longer lists as remaining, with a warning", async () => {
    await insertOldVars(3);
    const answer = await v1(NEW_ONLY, "POST", "sys/rotate/rewrap");
    expect(answer.status).toBe(200);
    expect(answer.json.data.rewrapped).toBe(0);
    expect(answer.json.data.remaining).toBeGreaterThanOrEqual(3);
    expect(answer.json.warnings.join(" ")).toMatch(/key id KEYWAY_KEK no longer lists/);
  });

  it("needs root or sudo on the path; a token with update only is refused and nothing changes", async () => {
    await insertOldVars(2);
    const updateOnly = await tokenWithPolicy({ "sys/rotate/rewrap": ["update"] });
    const before = await env.DB.prepare(
      "SELECT count(*) AS n FROM workspace_vars WHERE value_encrypted LIKE 'v1.t1.%'",
    ).first<{ n: number }>();
    expect((await v1(ROTATED, "POST", "sys/rotate/rewrap", undefined, {}, updateOnly)).status).toBe(403);
    expect((await v1(ROTATED, "POST", "sys/rotate/rewrap", undefined, {}, "no-such-token")).status).toBe(403);
    const after = await env.DB.prepare(
      "SELECT count(*) AS n FROM workspace_vars WHERE value_encrypted LIKE 'v1.t1.%'",
    ).first<{ n: number }>();
    expect(after!.n).toBe(before!.n);
    const sudo = await tokenWithPolicy({ "sys/rotate/rewrap": ["update", "sudo"] });
    const answer = await v1(ROTATED, "POST", "sys/rotate/rewrap", undefined, {}, sudo);
    expect(answer.status).toBe(200);
    expect(answer.json.data.rewrapped).toBeGreaterThanOrEqual(2);
  });

  it("every encrypted column of the schema is listed for rewrap", async () => {
    // A column named like an encrypted value that is not in ENCRYPTED_COLUMNS would never be rewrapped.
    const { results } = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '%encrypted%'",
    ).all<{
      name: string;
      sql: string;
    }>();
    const found = results.flatMap(({ name, sql }) =>
      [...sql.matchAll(/[`"]?(\w*encrypted\w*)[`"]?\s+text/gi)].map((m) => `${name}.${m[1]}`),
    );
    expect(found.length).toBeGreaterThanOrEqual(2);
    const listed = new Set(ENCRYPTED_COLUMNS.map((c) => `${c.table}.${c.column}`));
    for (const column of found) expect(listed.has(column), column).toBe(true);
  });
});

describe("B11: a CA key under an older key is rewrapped when read", () => {
  it("sign answers and the stored CA key is rewrapped under the primary key afterwards", async () => {
    const role = await setUpCaAndRole("ssh-two");
    expect(await caCiphertext("ssh-two")).toMatch(/^v1\.t1\./);
    const signed = await v1(ROTATED, "POST", `ssh-two/sign/${role}`, signBody);
    expect(signed.status).toBe(200);
    const after = await caCiphertext("ssh-two");
    expect(after).toMatch(/^v1\.n2\./);
    expect(await decryptSecret(NEW_ONLY, "ssh-ca:ssh-two", after)).toBe(
      await decryptSecret(ROTATED, "ssh-ca:ssh-two", after),
    );
    expect((await v1(NEW_ONLY, "POST", `ssh-two/sign/${role}`, signBody)).status).toBe(200);
  });

  it("a failed rewrap never fails the read: the sign answers 200 and the old ciphertext stays", async () => {
    const role = await setUpCaAndRole("ssh-two");
    const before = await caCiphertext("ssh-two");
    // The real D1 binding, with the rewrap's UPDATE made to fail (wrapping, not mocking, D1).
    const failingDb = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare") {
          return (sql: string) => {
            if (!sql.startsWith("UPDATE ssh_issuers SET private_key_encrypted")) return target.prepare(sql);
            const failing = {
              bind: () => failing,
              run: () => Promise.reject(new Error("injected D1 failure")),
            };
            return failing;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const signed = await v1(ROTATED, "POST", `ssh-two/sign/${role}`, signBody, { DB: failingDb });
    expect(signed.status).toBe(200);
    expect(await caCiphertext("ssh-two")).toBe(before);
  });
});
