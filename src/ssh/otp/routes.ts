/**
 * Routes of the OTP side of the SSH engine, relative to each
 * mount (S1). Only `verify` writes are served without a token (S16).
 */

import { legacyHostKeyRoutes } from "../legacy-host-keys/routes";
import { envelope, int, object, str, strings, written } from "../openapi/schemas";
import type { VaultRoute } from "../router";
import { CREDS_FIELDS, credsHandler } from "./creds";
import { LOOKUP_FIELDS, lookupHandler } from "./lookup";
import { VERIFY_FIELDS, verifyHandler } from "./verify";
import {
  deleteZeroAddressHandler,
  readZeroAddressHandler,
  writeZeroAddressHandler,
  ZERO_ADDRESS_FIELDS,
} from "./zeroaddress";

export const otpRoutes: VaultRoute[] = [
  {
    pattern: "config/zeroaddress",
    mounted: true,
    operations: { read: readZeroAddressHandler, update: writeZeroAddressHandler, delete: deleteZeroAddressHandler },
    docs: {
      operations: {
        read: {
          summary: "Read the roles allowed for any address",
          responses: envelope("role names", object({ roles: strings() })),
        },
        update: { summary: "Set the roles allowed for any address", body: ZERO_ADDRESS_FIELDS, responses: written() },
        delete: { summary: "Clear the zero-address roles", responses: written("deleted") },
      },
    },
  },
  {
    pattern: "creds/:name",
    mounted: true,
    operations: { update: credsHandler },
    docs: {
      params: { name: "the OTP role" },
      operations: {
        update: {
          summary: "Create a one-time password for a host",
          body: CREDS_FIELDS,
          responses: envelope(
            "the OTP; `lease_id` names it",
            object({
              key_type: { const: "otp" },
              key: str("the one-time password"),
              username: str(),
              ip: str(),
              port: int(),
            }),
          ),
        },
      },
    },
  },
  {
    pattern: "lookup",
    mounted: true,
    operations: { update: lookupHandler },
    docs: {
      operations: {
        update: {
          summary: "The OTP roles whose CIDR lists hold an address",
          body: LOOKUP_FIELDS,
          responses: envelope("role names", object({ roles: strings() })),
        },
      },
    },
  },
  {
    pattern: "verify",
    mounted: true,
    operations: { update: verifyHandler },
    unauthenticated: ["update"],
    docs: {
      operations: {
        update: {
          summary: "Verify (and spend) a one-time password",
          body: VERIFY_FIELDS,
          responses: envelope("the OTP's user, address and role (or the echo answer)", {
            oneOf: [
              object({ username: str(), ip: str(), role_name: str() }),
              object({ message: { const: "verify-echo-response" } }),
            ],
          }),
        },
      },
    },
  },
  ...legacyHostKeyRoutes,
];
