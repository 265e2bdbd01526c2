/**
 * Worker used by workerd-ssh-crypto.test.ts: runs the SSH CA facade inside workerd (where
 * production runs) and returns what it produced, so the Node test can check it with OpenSSH.
 * Not a test file itself; bundled with esbuild by the test.
 */
import { fromBase64 } from "../../../../src/lib/bytes";
import {
  generateSshKeyPair,
  importSigningKey,
  parseSubjectPublicKey,
  publicKeyHash,
  signCertificate,
  verifyCertificate,
} from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import type { RsaSignatureAlgorithm } from "../../../../src/lib/sshwire/key-types";

/** Request body. */
export interface WorkerInput {
  /** Fixture name → private key PEM. */
  readonly keys: Record<string, string>;
  /** Subject authorized_keys line. */
  readonly subject: string;
  /** ssh-keygen certificate lines to verify. */
  readonly certificates: string[];
}

/** One produced item: what it is, and whether the worker's own checks passed. */
export interface WorkerItem {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
  readonly certificate?: string;
  readonly privateKeyPem?: string;
  readonly publicKeyText?: string;
}

async function attempt(
  name: string,
  fn: () => Promise<Omit<WorkerItem, "name" | "ok"> & { ok?: boolean }>,
): Promise<WorkerItem> {
  try {
    const r = await fn();
    return { name, ok: r.ok ?? true, ...r };
  } catch (e) {
    return { name, ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

export default {
  async fetch(request: Request): Promise<Response> {
    const input = (await request.json()) as WorkerInput;
    const subject = parseSubjectPublicKey(input.subject);
    const template = {
      subjectKeyBlob: subject.blob,
      serial: 77n,
      certType: 1 as const,
      keyId: "workerd",
      principals: ["alice"],
      validAfter: 0n,
      validBefore: (1n << 64n) - 1n,
      criticalOptions: { "force-command": "/bin/true", "source-address": "10.0.0.0/8" },
      extensions: { "permit-X11-forwarding": "", "permit-pty": "" },
    };
    const items: WorkerItem[] = [];
    for (const [name, pem] of Object.entries(input.keys)) {
      const ca = await importSigningKey(pem);
      const algorithms: Array<RsaSignatureAlgorithm | undefined> =
        ca.keyType === "ssh-rsa" ? ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"] : [undefined];
      for (const alg of algorithms) {
        items.push(
          await attempt(`sign ${name} ${alg ?? ca.keyType}`, async () => {
            const signed = await signCertificate(ca, template, alg);
            return { ok: await verifyCertificate(signed.blob), certificate: signed.text };
          }),
        );
      }
    }
    for (const [kind, bits] of [
      ["rsa", 2048],
      ["ec", 256],
      ["ec", 384],
      ["ec", 521],
      ["ed25519", 0],
    ] as const) {
      items.push(
        await attempt(`generate ${kind} ${bits}`, async () => {
          const pair = await generateSshKeyPair(kind, bits);
          const again = await importSigningKey(pair.privateKeyPem);
          const signed = await signCertificate(pair.signingKey, template);
          return {
            ok: again.publicKeyText() === pair.publicKeyText && (await verifyCertificate(signed.blob)),
            privateKeyPem: pair.privateKeyPem,
            publicKeyText: pair.publicKeyText,
            certificate: signed.text,
          };
        }),
      );
    }
    for (const [i, line] of input.certificates.entries()) {
      items.push(
        await attempt(`verify ssh-keygen certificate ${i}`, async () => ({
          ok: await verifyCertificate(fromBase64(line.split(" ")[1]!)),
        })),
      );
    }
    return Response.json({ hash: await publicKeyHash(subject.blob), items });
  },
};
