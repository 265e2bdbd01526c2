/**
 * Routes of the OTP side of the SSH engine (seed rows 5–10 and 17), relative to each
 * mount (S1). Only `verify` writes are served without a token (S16).
 */
import type { VaultRoute } from "../router";
import { tidyRoutes } from "../tidy";
import { credsHandler } from "./creds";
import { lookupHandler } from "./lookup";
import { verifyHandler } from "./verify";
import { deleteZeroAddressHandler, readZeroAddressHandler, writeZeroAddressHandler } from "./zeroaddress";

export const otpRoutes: VaultRoute[] = [
  {
    pattern: "config/zeroaddress",
    mounted: true,
    operations: { read: readZeroAddressHandler, update: writeZeroAddressHandler, delete: deleteZeroAddressHandler },
  },
  { pattern: "creds/:name", mounted: true, operations: { update: credsHandler } },
  { pattern: "lookup", mounted: true, operations: { update: lookupHandler } },
  { pattern: "verify", mounted: true, operations: { update: verifyHandler }, unauthenticated: ["update"] },
  ...tidyRoutes,
];
