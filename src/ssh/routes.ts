/**
 * Every route of the secrets service (/v1). Feature modules export their route arrays;
 * this is the one place they are put together.
 */

import { caRoutes } from "./ca/routes";
import { identityRoutes } from "./identity/entity-routes";
import { groupRoutes } from "./identity/group-routes";
import { issuerRoutes } from "./issuers/routes";
import { oidcFlowRoutes } from "./jwt-auth/oidc-flow";
import { jwtAuthRoutes } from "./jwt-auth/routes";
import { openApiRoutes } from "./openapi/routes";
import { otpRoutes } from "./otp/routes";
import { revocationFeatureRoutes } from "./revocation/routes";
import { roleRoutes } from "./roles/routes";
import type { VaultRoute } from "./router";
import { signRoutes } from "./sign/routes";
import { authMountRoutes } from "./sys/auth-mount-routes";
import { healthRoutes } from "./sys/health-routes";
import { mountRoutes } from "./sys/mount-routes";
import { policyRoutes } from "./sys/policy-routes";
import { rotateRoutes } from "./sys/rotate-routes";
import { systemRoutes } from "./sys/system-routes";
import { tokenRoutes } from "./token-auth/routes";

export const vaultRoutes: VaultRoute[] = [
  ...tokenRoutes,
  ...policyRoutes,
  ...mountRoutes,
  ...systemRoutes,
  ...authMountRoutes,
  ...rotateRoutes,
  ...healthRoutes,
  ...identityRoutes,
  ...groupRoutes,
  // Auth methods enabled through sys/auth (S24, S25): after the token store's literal paths.
  ...jwtAuthRoutes,
  // S26: the OIDC browser flow of the same mounts.
  ...oidcFlowRoutes,
  // B14: the document of this table (built from it when first asked).
  ...openApiRoutes(() => vaultRoutes),
  // SSH engine routes (mounted: relative to each SSH mount, S1). The certificate authority:
  // roles (S12 PATCH), CA configuration and public key, the issuers of S20/S21, sign and
  // issue.
  ...roleRoutes,
  ...caRoutes,
  ...issuerRoutes,
  ...signRoutes,
  ...otpRoutes,
  ...revocationFeatureRoutes,
];
