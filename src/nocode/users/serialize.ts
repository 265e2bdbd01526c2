/** The `users` resource (HCP's shape). The e-mail address is shown to the user and the admin only. */
import type { UserRow } from "./repo";

/** Serialize a user; `showEmail` for the user itself and ADMIN_TOKEN. */
export function serializeUser(user: UserRow, options: { showEmail: boolean; self: boolean }) {
  const attributes: Record<string, unknown> = {
    username: user.username,
    "is-service-account": false,
    "avatar-url": null,
    "two-factor": { enabled: false, verified: false },
    permissions: {
      "can-create-organizations": false,
      "can-change-email": options.self,
      "can-change-username": false,
      "can-manage-user-tokens": options.self,
    },
  };
  if (options.showEmail) attributes["email"] = user.email;
  return {
    data: {
      id: user.id,
      type: "users",
      attributes,
      relationships: { "authentication-tokens": { links: { related: `/api/v2/users/${user.id}/authentication-tokens` } } },
      links: { self: `/api/v2/users/${user.id}` },
    },
  };
}
