/**
 * Bench-only Worker (docs/performance.md): the raw in-isolate certificate signing rate of one CA key,
 * with no HTTP routing, D1, Durable Object or token check around it. `npm run bench`
 * bundles this file with esbuild and runs it as a second Worker in the same Miniflare
 * instance as Keyway, so the two rates come from the same workerd process and machine.
 *
 * POST a JSON body {@link SignRateRequest}; the answer is a {@link SignRateResult}. The
 * loop signs one certificate at a time through the same facade the `sign` endpoint uses
 * (`src/lib/crypto/ssh-keys-and-certificates`), with the same shape of certificate (one principal, the
 * `permit-pty` extension, a fresh random nonce and serial each time).
 *
 * `POST /keygen` {@link KeygenRateRequest} → {@link KeygenRateResult}: the raw in-isolate
 * RSA key generation rate (docs/performance.md), one `crypto.subtle.generateKey` at a time with the
 * parameters `issue` uses (src/lib/crypto/ssh-keys-and-certificates.ts `generateSshKeyPair`), nothing else:
 * the honest reference for `issue` with `key_type: rsa`.
 */
import { randomBytes } from "../../src/lib/bytes";
import {
  generateSshKeyPair,
  importSigningKey,
  parseSubjectPublicKey,
  signCertificate,
} from "../../src/lib/crypto/ssh-keys-and-certificates";

/** What to measure. */
export interface SignRateRequest {
  /** CA private key, PEM or OpenSSH text. */
  privateKey: string;
  /** Subject public key, authorized_keys line. */
  subjectPublicKey: string;
  /** Length of the timed loop, ms. */
  durationMs: number;
  /** Untimed signatures before the loop (lazy WebCrypto imports, JIT). */
  warmup?: number;
}

/** What was measured. */
export interface SignRateResult {
  keyType: string;
  bits: number;
  algorithm: string;
  signatures: number;
  elapsedMs: number;
  perSecond: number;
}

/** What to measure for key generation. */
export interface KeygenRateRequest {
  bits: number;
  /**
   * `generateKey` (default): WebCrypto's key generation alone. `generateSshKeyPair`: what
   * `issue` runs for its key: generation, PKCS#8 export and the OpenSSH/PEM text.
   */
  mode?: "generateKey" | "generateSshKeyPair";
  /** Length of the timed loop, ms (the key in progress at the deadline is counted). */
  durationMs: number;
  /** Untimed keys first. */
  warmup?: number;
}

/** Keys generated; `perSecond` as for signatures (the field name the bench reads). */
export interface KeygenRateResult {
  bits: number;
  keys: number;
  signatures: number;
  elapsedMs: number;
  perSecond: number;
}

async function keygenRate(input: KeygenRateRequest): Promise<KeygenRateResult> {
  const params = {
    name: "RSASSA-PKCS1-v1_5",
    modulusLength: input.bits,
    publicExponent: Uint8Array.of(1, 0, 1),
    hash: "SHA-256",
  };
  const generate =
    input.mode === "generateSshKeyPair"
      ? () => generateSshKeyPair("rsa", input.bits)
      : () => crypto.subtle.generateKey(params, true, ["sign", "verify"]);
  for (let i = 0; i < (input.warmup ?? 0); i++) await generate();
  const start = Date.now();
  const deadline = start + input.durationMs;
  let keys = 0;
  let now = start;
  while (now < deadline) {
    await generate();
    keys++;
    now = Date.now();
  }
  const elapsedMs = now - start;
  return {
    bits: input.bits,
    keys,
    signatures: keys,
    elapsedMs,
    perSecond: elapsedMs > 0 ? (keys * 1000) / elapsedMs : 0,
  };
}

function serial(): bigint {
  let n = 0n;
  for (const byte of randomBytes(8)) n = (n << 8n) | BigInt(byte);
  return n;
}

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("POST a SignRateRequest\n", { status: 405 });
    if (new URL(request.url).pathname === "/keygen")
      return Response.json(await keygenRate((await request.json()) as KeygenRateRequest));
    const input = (await request.json()) as SignRateRequest;
    const ca = await importSigningKey(input.privateKey);
    const subject = parseSubjectPublicKey(input.subjectPublicKey);
    const nowSeconds = BigInt(Math.floor(Date.now() / 1000));
    const signOnce = () =>
      signCertificate(ca, {
        subjectKeyBlob: subject.blob,
        serial: serial(),
        certType: 1,
        keyId: "bench",
        principals: ["alice"],
        validAfter: nowSeconds - 30n,
        validBefore: nowSeconds + 3600n,
        criticalOptions: {},
        extensions: { "permit-pty": "" },
      });
    let algorithm = "";
    for (let i = 0; i < (input.warmup ?? 20); i++) algorithm = (await signOnce()).algorithm;

    // workerd under Miniflare advances Date.now() during CPU work (no Spectre clock
    // freeze locally), so a deadline loop measures wall time inside the isolate.
    const start = Date.now();
    const deadline = start + input.durationMs;
    let signatures = 0;
    let now = start;
    while (now < deadline) {
      await signOnce();
      signatures++;
      now = Date.now();
    }
    const elapsedMs = now - start;
    const result: SignRateResult = {
      keyType: ca.keyType,
      bits: ca.bits,
      algorithm,
      signatures,
      elapsedMs,
      perSecond: elapsedMs > 0 ? (signatures * 1000) / elapsedMs : 0,
    };
    return Response.json(result);
  },
} satisfies ExportedHandler;
