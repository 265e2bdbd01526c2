/**
 * Seed rows 1–4 and S12's PATCH: `roles/:name` (read, write, patch, delete) and the list
 * `GET roles?list=true` (S2) on every SSH mount (S1).
 */
import { notFound } from "../errors";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRoute } from "../router";
import { roleData } from "./output";
import { mergeRolePatch } from "./patch";
import { deleteRole, getRole, listRoles, putRole } from "./repo";
import { buildRole } from "./validate";

/** Mount-relative routes of roles (list, read, write, patch, delete). */
export const roleRoutes: VaultRoute[] = [
  {
    pattern: "roles",
    mounted: true,
    operations: {
      // Reference §3.3: sorted names and key types; no roles → 404 {"errors":[]}.
      list: async (req) => {
        const roles = await listRoles(req.db, req.mount);
        if (roles.length === 0) throw notFound();
        const keyInfo: Record<string, { key_type: string }> = {};
        for (const r of roles) keyInfo[r.name] = { key_type: r.keyType };
        return vaultJson(req, { data: { keys: roles.map((r) => r.name), key_info: keyInfo } });
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
        await putRole(req.db, req.mount, role);
        return vaultNoContent(req, warnings);
      },
      // S12: JSON merge patch over the role as it reads back, validated like a write.
      patch: async (req) => {
        const current = await getRole(req.db, req.mount, req.params.name!);
        if (!current) throw notFound();
        const { role, warnings } = buildRole(req.params.name!, mergeRolePatch(roleData(current), req.body));
        await putRole(req.db, req.mount, role);
        return vaultNoContent(req, warnings);
      },
      // Reference §3.4: always 204.
      delete: async (req) => {
        await deleteRole(req.db, req.mount, req.params.name!);
        return vaultNoContent(req);
      },
    },
  },
];
