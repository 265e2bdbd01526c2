/**
 * `config/ca` (read, write, delete) and the unauthenticated
 * `GET public_key` (S16), with Vault's decision table and messages (Vault's
 * path_config_ca.go and path_fetch.go), decision S9 (every parameter is validated before a key is generated; a
 * supplied pair must match) and S20: a mount's CA is its default issuer. A write creates
 * a new issuer and makes it the default, keeping the previous ones (OpenBao); a read shows
 * the default issuer; a delete removes every issuer.
 */
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { KEY_MATERIAL_FIELDS, keyMaterialFrom } from "../issuers/key-material";
import { defaultIssuerOf, deleteAllIssuers, issuersOfMount, type MountIssuers } from "../issuers/repo";
import { cachedIssuersOfMount, checkIssuerName, createIssuer, noDefaultIssuer } from "../issuers/service";
import { envelope, nullable, object, plainText, str, written } from "../openapi/schemas";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";

const CONFIG_CA_FIELDS = { ...KEY_MATERIAL_FIELDS, issuer_name: { type: "string" } } as const;

async function writeConfigCa(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, CONFIG_CA_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  // A bad or taken name is refused before any key is generated (S9).
  checkIssuerName(await issuersOfMount(req.db, req.mount), f.values.issuer_name as string, { emptyAllowed: true });
  const material = await keyMaterialFrom(f.values, f.provided);
  const created = await createIssuer(req.env, req.db, req.mount, {
    name: f.values.issuer_name as string,
    material,
    setDefault: true,
    trusted: true,
  });
  warnings.push(...created.warnings);
  // S9's answers: 200 with the generated public key; 204 for supplied keys.
  if (!material.generated) return vaultNoContent(req, warnings);
  return vaultJson(req, { data: { public_key: material.publicKeyText }, warnings });
}

/** The default issuer of a mount; `none` answers when the mount has no issuer at all. */
function defaultOrThrow(set: MountIssuers, none: () => Error) {
  if (set.issuers.length === 0) throw none();
  const issuer = defaultIssuerOf(set);
  if (!issuer) throw noDefaultIssuer();
  return issuer;
}

/** Mount-relative routes `config/ca` and `public_key`. */
export const caRoutes: VaultRoute[] = [
  {
    pattern: "config/ca",
    mounted: true,
    operations: {
      // S3: no CA is 400 with Vault's text (its UI depends on it), not 404.
      read: async (req) => {
        const issuer = defaultOrThrow(await cachedIssuersOfMount(req.db, req.mount), () =>
          badRequest("keys haven't been configured yet"),
        );
        return vaultJson(req, { data: { public_key: issuer.publicKey } });
      },
      update: writeConfigCa,
      // S20: every issuer goes; 204 as before (S3: a write with nothing to return).
      delete: async (req) => {
        await deleteAllIssuers(req.db, req.mount);
        return vaultNoContent(req);
      },
    },
    docs: {
      operations: {
        read: {
          summary: "Read the public key of the default issuer",
          responses: envelope("the CA public key", object({ public_key: str() })),
        },
        update: {
          summary: "Add a CA key (generated or supplied) as a new default issuer",
          body: CONFIG_CA_FIELDS,
          responses: {
            ...written("supplied key pair stored"),
            ...envelope(
              "generated: the new public key (`data` is null when a supplied pair comes with warnings)",
              nullable(object({ public_key: str() })),
            ),
          },
        },
        delete: { summary: "Delete every issuer of the mount", responses: written("deleted") },
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
        const issuer = defaultOrThrow(await cachedIssuersOfMount(req.db, req.mount), notFound);
        // The stored text, which is the canonical form of the key (B17).
        return new Response(issuer.publicKey, { status: 200, headers: { "Content-Type": "text/plain" } });
      },
    },
    docs: {
      operations: {
        read: {
          summary: "The default issuer's public key, in canonical text (B17)",
          responses: plainText("an OpenSSH public key"),
        },
      },
    },
  },
];
