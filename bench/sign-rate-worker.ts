/**
 * Bench-only Worker (issue #9): the raw in-isolate certificate signing rate of one CA key,
 * with no HTTP routing, D1, Durable Object or token check around it. `npm run bench`
 * bundles this file with esbuild and runs it as a second Worker in the same Miniflare
 * instance as Keyway, so the two rates come from the same workerd process and machine.
 *
 * POST a JSON body {@link SignRateRequest}; the answer is a {@link SignRateResult}. The
 * loop signs one certificate at a time through the same facade the `sign` endpoint uses
 * (`src/lib/crypto/ssh-keys-and-certificates`), with the same shape of certificate (one principal, the
 * `permit-pty` extension, a fresh random nonce and serial each time).
 */
import { randomBytes } from "../src/lib/bytes";
import { importSigningKey, parseSubjectPublicKey, signCertificate } from "../src/lib/crypto/ssh-keys-and-certificates";

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

function serial(): bigint {
  let n = 0n;
  for (const byte of randomBytes(8)) n = (n << 8n) | BigInt(byte);
  return n;
}

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST") return new Response("POST a SignRateRequest\n", { status: 405 });
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
