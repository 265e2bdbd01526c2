/// <reference types="vite/client" />
/**
 * SSH key fixtures for the CA worker tests, read from test/fixtures/ssh (real ssh-keygen and
 * openssl output, see its README) at bundle time, so no test generates an RSA key it only
 * needs to import.
 */

import { fromBase64 } from "../../../src/lib/bytes";
import { decodeCertificate, optionsToRecord, type SshCertificate } from "../../../src/lib/sshwire/certificate";
import { parsePublicKeyText } from "../../../src/lib/sshwire/public-key";
import userCert from "../../fixtures/ssh/certs/user-ed25519-by-ed25519-cert.pub?raw";
import encryptedEd25519 from "../../fixtures/ssh/encrypted/openssh-ed25519?raw";
import dsa1024Pub from "../../fixtures/ssh/keys/dsa-1024.pub?raw";
import ecdsa256 from "../../fixtures/ssh/keys/ecdsa-256?raw";
import ecdsa256Pub from "../../fixtures/ssh/keys/ecdsa-256.pub?raw";
import ecdsa256Sec1 from "../../fixtures/ssh/keys/ecdsa-256-sec1?raw";
import ecdsa256Sec1Pub from "../../fixtures/ssh/keys/ecdsa-256-sec1.pub?raw";
import ecdsa384 from "../../fixtures/ssh/keys/ecdsa-384?raw";
import ecdsa384Pub from "../../fixtures/ssh/keys/ecdsa-384.pub?raw";
import ecdsa521Pub from "../../fixtures/ssh/keys/ecdsa-521.pub?raw";
import ed25519 from "../../fixtures/ssh/keys/ed25519?raw";
import ed25519Pub from "../../fixtures/ssh/keys/ed25519.pub?raw";
import openSslEd25519 from "../../fixtures/ssh/keys/openssl-ed25519-pkcs8?raw";
import openSslEd25519Pub from "../../fixtures/ssh/keys/openssl-ed25519-pkcs8.pub?raw";
import rsa2048 from "../../fixtures/ssh/keys/rsa-2048?raw";
import rsa2048Pub from "../../fixtures/ssh/keys/rsa-2048.pub?raw";
import rsa2048Pkcs1 from "../../fixtures/ssh/keys/rsa-2048-pkcs1?raw";
import rsa2048Pkcs1Pub from "../../fixtures/ssh/keys/rsa-2048-pkcs1.pub?raw";
import rsa3072Pub from "../../fixtures/ssh/keys/rsa-3072.pub?raw";
import rsa4096 from "../../fixtures/ssh/keys/rsa-4096?raw";
import rsa4096Pub from "../../fixtures/ssh/keys/rsa-4096.pub?raw";
import skEcdsaPub from "../../fixtures/ssh/keys/sk-ecdsa.pub?raw";
import { tokenWithPolicy, uniqueName, vault } from "../../helpers/vault";

/** Private/public pairs usable as an imported CA. */
export const CA_KEYS = {
  rsa2048: { privateKey: rsa2048, publicKey: rsa2048Pub },
  rsa2048Pkcs1: { privateKey: rsa2048Pkcs1, publicKey: rsa2048Pkcs1Pub },
  rsa4096: { privateKey: rsa4096, publicKey: rsa4096Pub },
  ecdsa256: { privateKey: ecdsa256, publicKey: ecdsa256Pub },
  ecdsa384: { privateKey: ecdsa384, publicKey: ecdsa384Pub },
  ed25519: { privateKey: ed25519, publicKey: ed25519Pub },
  ed25519Pkcs8: { privateKey: openSslEd25519, publicKey: openSslEd25519Pub },
  ecdsa256Sec1: { privateKey: ecdsa256Sec1, publicKey: ecdsa256Sec1Pub },
} as const;

/** A passphrase-protected openssh-key-v1 key (fixture-passphrase), which cannot be imported. */
export const ENCRYPTED_PRIVATE_KEY = encryptedEd25519;

/** Subject public keys (authorized_keys lines with a comment and trailing newline). */
export const SUBJECT_KEYS = {
  rsa2048: rsa2048Pub,
  rsa3072: rsa3072Pub,
  rsa4096: rsa4096Pub,
  ecdsa256: ecdsa256Pub,
  ecdsa384: ecdsa384Pub,
  ecdsa521: ecdsa521Pub,
  ed25519: ed25519Pub,
  dsa1024: dsa1024Pub,
  skEcdsa: skEcdsaPub,
  /** A certificate, which S17 refuses as a subject key. */
  certificate: userCert,
} as const;

/** Decode a `signed_key` (`<type> <base64>\n`). */
export function decodeSignedKey(signedKey: string): SshCertificate {
  return decodeCertificate(fromBase64(signedKey.trim().split(" ")[1]!));
}

/** The wire blob of an authorized_keys line. */
export function blobOf(publicKeyText: string): Uint8Array {
  return parsePublicKeyText(publicKeyText.trim()).blob;
}

/** Lowercase hex SHA-256 of a public key's wire blob (S7 `{{public_key_hash}}`). */
export async function sha256Hex(blob: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", blob));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Option list of a decoded certificate as a name → value record. */
export function optionsOf(options: SshCertificate["extensions"]): Record<string, string> {
  return optionsToRecord(options);
}

/** A token whose identity entity (S5a) renders templates, plus what the tests compare with. */
export interface EntityToken {
  token: string;
  entityId: string;
  /** The token store's mount accessor (`auth_token_<8 hex>`), for alias templates. */
  accessor: string;
  aliasName: string;
  /** `token-<display_name>` (S5a). */
  displayName: string;
}

/**
 * Create an entity with `metadata` and an alias on the token store, and a token for it that
 * may sign and issue on both test mounts (S6: `create` suffices).
 */
export async function entityToken(metadata: Record<string, string>, displayName = "vaultssh"): Promise<EntityToken> {
  const entity = await vault("POST", "identity/entity", { body: { name: uniqueName("entity"), metadata } });
  if (entity.status !== 200) throw new Error(`entity create failed: ${entity.status} ${entity.text}`);
  const entityId = entity.json.data.id as string;
  const auth = await vault("GET", "sys/auth");
  const accessor = auth.json.data["token/"].accessor as string;
  const aliasName = uniqueName("alias");
  const alias = await vault("POST", "identity/entity-alias", {
    body: { name: aliasName, canonical_id: entityId, mount_accessor: accessor },
  });
  if (alias.status !== 200) throw new Error(`alias create failed: ${alias.status} ${alias.text}`);
  const caps = ["create", "update"];
  const token = await tokenWithPolicy(
    { "ssh/sign/*": caps, "ssh/issue/*": caps, "ssh-two/sign/*": caps, "ssh-two/issue/*": caps },
    { entity_id: entityId, display_name: displayName },
  );
  return { token, entityId, accessor, aliasName, displayName: `token-${displayName}` };
}
