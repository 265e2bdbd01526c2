/**
 * Seed rows 11–14: `config/ca` (read, write, delete) and the unauthenticated
 * `GET public_key` (S16), with Vault's decision table and messages (vault-ssh-behaviour
 * §3.9–§3.10) and decision S9 (a write replaces the CA; every parameter is validated before
 * a key is generated; a supplied pair must match).
 */
import { bytesEqual } from "../../lib/bytes";
import { generateSshKeyPair, importSigningKey, SshKeyError, type SshSigningKey } from "../../lib/crypto/ssh-ca";
import { WireError } from "../../lib/sshwire/errors";
import { parsePublicKeyText } from "../../lib/sshwire/public-key";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { caKeySpec, KeySpecError, sshKeyTypeOf } from "./key-specs";
import { deleteCa, readCa, writeCa } from "./store";

const CONFIG_CA_FIELDS = {
  private_key: { type: "string" },
  public_key: { type: "string" },
  generate_signing_key: { type: "bool", default: true },
  key_type: { type: "string", default: "ssh-rsa" },
  key_bits: { type: "int" },
} as const;

/**
 * Why a supplied key was refused: the cause after Vault's prefix. Whatever fails while
 * reading caller-supplied key text is the caller's input (B3), never a 500.
 */
function causeOf(e: unknown): string {
  if (e instanceof WireError && e.code === "CERTIFICATE") return "a certificate is not a CA public key";
  if (e instanceof SshKeyError || e instanceof WireError) return e.message;
  return "the key data could not be read";
}

/** Check a supplied pair (reference §3.9 row "explicitly false"), in Vault's order. */
async function importSuppliedPair(publicKeyText: string, privateKeyPem: string): Promise<SshSigningKey> {
  if (publicKeyText === "") throw badRequest("missing public_key");
  if (privateKeyPem === "") throw badRequest("missing private_key");
  let signingKey: SshSigningKey;
  try {
    signingKey = await importSigningKey(privateKeyPem);
  } catch (e) {
    throw badRequest(`Unable to parse private_key as an SSH private key: ${causeOf(e)}`);
  }
  let blob: Uint8Array;
  try {
    blob = parsePublicKeyText(publicKeyText.trim()).blob;
  } catch (e) {
    throw badRequest(`Unable to parse public_key as an SSH public key: ${causeOf(e)}`);
  }
  // S9: Vault stores a mismatched pair and then publishes the wrong CA; we refuse it.
  if (!bytesEqual(blob, signingKey.publicKeyBlob)) throw badRequest("public_key does not match private_key");
  return signingKey;
}

async function writeConfigCa(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, CONFIG_CA_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  const publicKey = f.values.public_key as string;
  const privateKey = f.values.private_key as string;
  const generateSet = f.provided.has("generate_signing_key");
  const generate = f.values.generate_signing_key as boolean;
  const anyKey = publicKey !== "" || privateKey !== "";

  // Reference §3.9 decision table, in its order.
  let useSupplied: boolean;
  if (generateSet && generate) {
    if (anyKey) throw badRequest("public_key and private_key must not be set when generate_signing_key is set to true");
    useSupplied = false;
  } else if (generateSet || (publicKey !== "" && privateKey !== "")) {
    useSupplied = true;
  } else if (!anyKey) {
    useSupplied = false;
  } else {
    throw badRequest(
      "only one of public_key and private_key set; both must be set to use, or both must be blank to auto-generate",
    );
  }

  if (useSupplied) {
    const signingKey = await importSuppliedPair(publicKey, privateKey);
    await writeCa(req.env, req.db, req.mount, {
      publicKeyText: publicKey,
      privateKeyPem: privateKey,
      keyType: signingKey.keyType,
      signingKey,
    });
    return vaultNoContent(req, warnings);
  }

  // S9: validate key_type and key_bits before generating anything.
  let spec: ReturnType<typeof caKeySpec>;
  try {
    spec = caKeySpec(f.values.key_type as string, f.values.key_bits as number);
  } catch (e) {
    if (e instanceof KeySpecError) throw badRequest(e.message);
    throw e;
  }
  let pair: Awaited<ReturnType<typeof generateSshKeyPair>>;
  try {
    pair = await generateSshKeyPair(spec.kind, spec.bits, { anyRsaSize: true });
  } catch (e) {
    // A size the generator refuses is the caller's mistake (B3, S4), never a 500.
    if (e instanceof SshKeyError && e.code === "INVALID_KEY_SIZE") throw badRequest(e.message);
    throw e;
  }
  await writeCa(req.env, req.db, req.mount, {
    publicKeyText: pair.publicKeyText,
    privateKeyPem: pair.privateKeyPem,
    keyType: sshKeyTypeOf(spec),
    signingKey: pair.signingKey,
  });
  return vaultJson(req, { data: { public_key: pair.publicKeyText }, warnings });
}

/** Mount-relative routes `config/ca` and `public_key`. */
export const caRoutes: VaultRoute[] = [
  {
    pattern: "config/ca",
    mounted: true,
    operations: {
      // S3: no CA is 400 with Vault's text (its UI depends on it), not 404.
      read: async (req) => {
        const ca = await readCa(req.db, req.mount);
        if (!ca) throw badRequest("keys haven't been configured yet");
        return vaultJson(req, { data: { public_key: ca.publicKey } });
      },
      update: writeConfigCa,
      delete: async (req) => {
        await deleteCa(req.db, req.mount);
        return vaultNoContent(req);
      },
    },
  },
  {
    pattern: "public_key",
    mounted: true,
    // S16: the only read served without a token; other methods are 405 after auth (S2a).
    unauthenticated: ["read"],
    operations: {
      read: async (req) => {
        const ca = await readCa(req.db, req.mount);
        if (!ca) throw notFound();
        // Byte-identical to what was stored (reference §3.10).
        return new Response(ca.publicKey, { status: 200, headers: { "Content-Type": "text/plain" } });
      },
    },
  },
];
