/**
 * The SSH certificate authority of each mount (issue #4): roles (seed rows 1–4, S12 PATCH),
 * CA configuration and public key (rows 11–14), sign and issue (rows 15–16), and the issuers
 * of decisions S20/S21.
 */
import { issuerRoutes } from "../issuers/routes";
import type { VaultRoute } from "../router";
import { roleRoutes } from "../roles/routes";
import { signRoutes } from "../sign/routes";
import { caRoutes } from "./routes";

/** Every route of issue #4, added to the /v1 table in src/ssh/routes.ts. */
export const certificateAuthorityRoutes: VaultRoute[] = [...roleRoutes, ...caRoutes, ...issuerRoutes, ...signRoutes];
