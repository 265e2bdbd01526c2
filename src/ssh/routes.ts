/**
 * Every route of the secrets service (/v1). Feature modules export their route arrays;
 * this is the one place they are put together.
 */
import { tokenRoutes } from "./auth/routes";
import { certificateAuthorityRoutes } from "./ca";
import { identityRoutes } from "./identity/entities";
import { openApiRoutes } from "./openapi/routes";
import type { VaultRoute } from "./router";
import { otpRoutes } from "./otp/routes";
import { revocationFeatureRoutes } from "./revocation";
import { healthRoutes } from "./sys/health";
import { mountRoutes } from "./sys/mounts";
import { policyRoutes } from "./sys/policies";
import { rotateRoutes } from "./sys/rotate";
import { systemRoutes } from "./sys/system";

export const vaultRoutes: VaultRoute[] = [
  ...tokenRoutes,
  ...policyRoutes,
  ...mountRoutes,
  ...systemRoutes,
  ...rotateRoutes,
  ...healthRoutes,
  ...identityRoutes,
  // B14: the document of this table (built from it when first asked).
  ...openApiRoutes(() => vaultRoutes),
  // SSH engine routes (mounted: relative to each SSH mount, S1)
  ...certificateAuthorityRoutes,
  ...otpRoutes,
  ...revocationFeatureRoutes,
];
