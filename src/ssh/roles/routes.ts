/**
 * Roles and S12's PATCH: `roles/:name` (read, write, patch, delete) and the list
 * `GET roles?list=true` (S2) on every SSH mount (S1).
 */
import type { Db } from "../../db/client";
import { notFound } from "../errors";
import { DEFAULT_ISSUER_REF, issuerByRef, issuersOfMount } from "../issuers/repo";
import { unknownIssuer } from "../issuers/service";
import { envelope, listData, object, str, written } from "../openapi/schemas";
import { keyedList, vaultJson, vaultNoContent } from "../respond";
import type { VaultRoute } from "../router";
import type { Role } from "./model";
import { roleData, roleDataSchema } from "./output";
import { mergeRolePatch } from "./patch";
import { deleteRole, getRole, listRoles, putRole } from "./repo";
import { buildRole, ROLE_FIELDS } from "./validate";

/**
 * S20: a CA role's `issuer_ref` must name an issuer of the mount when it is written
 * (`default` is resolved at sign time, as OpenBao does, so a role may be written before
 * the mount has a CA).
 */
async function checkRoleIssuer(db: Db, mount: string, role: Role): Promise<void> {
  if (role.keyType !== "ca" || role.issuerRef === DEFAULT_ISSUER_REF) return;
  if (!issuerByRef(await issuersOfMount(db, mount), role.issuerRef)) throw unknownIssuer(role.issuerRef);
}

/** Mount-relative routes of roles (list, read, write, patch, delete). */
export const roleRoutes: VaultRoute[] = [
  {
    pattern: "roles",
    mounted: true,
    operations: {
      // Vault's path_roles.go: sorted names and key types; no roles → 404 {"errors":[]}.
      list: async (req) => {
        const roles = await listRoles(req.db, req.mount);
        if (roles.length === 0) throw notFound();
        // S20: CA roles show the issuer they sign with.
        const data = keyedList(
          roles,
          (r) => r.name,
          (r) => (r.keyType === "ca" ? { key_type: r.keyType, issuer_ref: r.issuerRef } : { key_type: r.keyType }),
        );
        return vaultJson(req, { data });
      },
    },
    docs: {
      operations: {
        list: {
          summary: "List the roles of a mount",
          responses: envelope(
            "role names and key types",
            listData(object({ key_type: { enum: ["ca", "otp"] }, issuer_ref: str() }, ["issuer_ref"])),
          ),
        },
      },
    },
  },
  {
    pattern: "roles/:name",
    mounted: true,
    operations: {
      read: async (req) => {
        const role = await getRole(req.db, req.mount, req.params.name!);
        if (!role) throw notFound();
        return vaultJson(req, { data: roleData(role) });
      },
      // POST/PUT: full replace (S12). Validation throws before anything is stored.
      update: async (req) => {
        const { role, warnings } = buildRole(req.params.name!, req.body);
        await checkRoleIssuer(req.db, req.mount, role);
        await putRole(req.db, req.mount, role);
        return vaultNoContent(req, warnings);
      },
      // S12: JSON merge patch over the role as it reads back, validated like a write.
      patch: async (req) => {
        const current = await getRole(req.db, req.mount, req.params.name!);
        if (!current) throw notFound();
        const { role, warnings } = buildRole(req.params.name!, mergeRolePatch(roleData(current), req.body));
        await checkRoleIssuer(req.db, req.mount, role);
        await putRole(req.db, req.mount, role);
        return vaultNoContent(req, warnings);
      },
      // Vault's path_roles.go: always 204.
      delete: async (req) => {
        await deleteRole(req.db, req.mount, req.params.name!);
        return vaultNoContent(req);
      },
    },
    docs: {
      params: { name: "the role name" },
      operations: {
        read: { summary: "Read a role", responses: envelope("the role", roleDataSchema) },
        update: { summary: "Create or replace a role", body: ROLE_FIELDS, responses: written() },
        patch: { summary: "Change some fields of a role (JSON merge patch)", body: ROLE_FIELDS, responses: written() },
        delete: { summary: "Delete a role", responses: written("deleted") },
      },
    },
  },
];
