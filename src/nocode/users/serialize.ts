/** The `users` resource (HCP's shape). The e-mail address is shown to the user and the admin only. */
import * as v from "valibot";
import { linkAnswer, orNull, resourceAnswer, single } from "../request/answers";
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
      relationships: {
        "authentication-tokens": { links: { related: `/api/v2/users/${user.id}/authentication-tokens` } },
      },
      links: { self: `/api/v2/users/${user.id}` },
    },
  };
}

/** B14: the document serializeUser renders (`email` for the user itself and ADMIN_TOKEN only). */
export const userAnswer = single(
  resourceAnswer(
    "users",
    {
      username: v.string(),
      email: v.optional(v.string()),
      "is-service-account": v.literal(false),
      "avatar-url": orNull(v.string()),
      "two-factor": v.strictObject({ enabled: v.boolean(), verified: v.boolean() }),
      permissions: v.strictObject({
        "can-create-organizations": v.boolean(),
        "can-change-email": v.boolean(),
        "can-change-username": v.boolean(),
        "can-manage-user-tokens": v.boolean(),
      }),
    },
    { "authentication-tokens": linkAnswer },
  ),
);
