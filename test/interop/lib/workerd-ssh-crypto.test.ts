/**
 * The SSH crypto facade inside workerd, the production runtime: the facade is bundled with
 * esbuild into a tiny worker (workerd/ssh-crypto-worker.ts) and run by Miniflare. Every CA
 * fixture key imports and signs there, every kind of generated key works there, and what
 * workerd produced is then checked by the real ssh-keygen (`-y` for keys, `-L` for
 * certificates). This caught that workerd only generates RSA keys in multiples of 128 bits.
 */
import path from "node:path";
import { build } from "esbuild";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary, OpensshSandbox, parseCertificateListing } from "../../support/openssh";
import { compatibilityDate } from "../../support/wrangler-config";
import { fixtureNames, fixtureText, privateKeyFixtureNames } from "../../unit/lib/support/fixtures";
import type { WorkerInput, WorkerItem } from "./workerd/ssh-crypto-worker";

const CA_KEYS = [
  "rsa-2048-pkcs1",
  "openssl-rsa-2048-pkcs8",
  "ecdsa-256",
  "ecdsa-384-pkcs8",
  "ecdsa-521-sec1",
  "openssl-ec-256-sec1-params",
  "ed25519",
  "openssl-ed25519-pkcs8",
];

let sandbox: OpensshSandbox;
let result: { hash: string; items: WorkerItem[] };

beforeAll(async () => {
  findBinary("ssh-keygen");
  expect(privateKeyFixtureNames()).toEqual(expect.arrayContaining(CA_KEYS));
  sandbox = await OpensshSandbox.create();
  const bundle = await build({
    entryPoints: [path.join(import.meta.dirname, "workerd/ssh-crypto-worker.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
    logLevel: "silent",
  });
  // Miniflare 5 takes a new configuration shape; its converter keeps the v4 one readable.
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: bundle.outputFiles[0]!.text,
      compatibilityDate: compatibilityDate(),
    }),
  );
  try {
    const input: WorkerInput = {
      keys: Object.fromEntries(CA_KEYS.map((k) => [k, fixtureText(`keys/${k}`)])),
      subject: fixtureText("keys/sk-ecdsa.pub"),
      certificates: fixtureNames("certs", /-cert\.pub$/).map((c) => fixtureText(`certs/${c}`)),
    };
    const response = await mf.dispatchFetch("http://workerd.test/", { method: "POST", body: JSON.stringify(input) });
    result = (await response.json()) as typeof result;
  } finally {
    await mf.dispose();
  }
}, 120_000);

afterAll(async () => {
  await sandbox?.dispose();
});

describe("SSH crypto in workerd", () => {
  it("every import, signature, generation and verification succeeds there", () => {
    const failed = result.items.filter((i) => !i.ok).map((i) => `${i.name}: ${i.error ?? "check failed"}`);
    expect(failed).toEqual([]);
    // 2 RSA keys × 3 algorithms + 6 others, 5 generated kinds, every ssh-keygen certificate.
    expect(result.items.length).toBe(2 * 3 + 6 + 5 + fixtureNames("certs", /-cert\.pub$/).length);
    expect(result.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("ssh-keygen accepts the certificates workerd signed", async () => {
    const certs = result.items.filter((i) => i.certificate);
    expect(certs.length).toBe(2 * 3 + 6 + 5);
    for (const [n, item] of certs.entries()) {
      await sandbox.write(`w${n}-cert.pub`, item.certificate!, 0o644);
      const run = await sandbox.sshKeygen(["-L", "-f", `w${n}-cert.pub`]);
      expect(run.code, `${item.name}: ${run.stderr}`).toBe(0);
      const listing = parseCertificateListing(run.stdout);
      expect(listing.criticalOptions).toEqual([
        ["force-command", "/bin/true"],
        ["source-address", "10.0.0.0/8"],
      ]);
      expect(listing.extensions).toEqual([
        ["permit-X11-forwarding", ""],
        ["permit-pty", ""],
      ]);
    }
  });

  it("ssh-keygen -y loads the private keys workerd generated", async () => {
    const generated = result.items.filter((i) => i.privateKeyPem);
    expect(generated.length).toBe(5);
    for (const [n, item] of generated.entries()) {
      await sandbox.write(`w${n}.key`, item.privateKeyPem!);
      const run = await sandbox.sshKeygen(["-y", "-f", `w${n}.key`]);
      expect(run.code, `${item.name}: ${run.stderr}`).toBe(0);
      expect(`${run.stdout.trim()}\n`).toBe(item.publicKeyText);
    }
  });
});
