/**
 * B12: Terraform's remote service discovery. The `tfe` provider and the cloud backend read
 * `tfe.v2*`; `terraform init` reads `modules.v1` to find the module registry (B13). Public:
 * discovery happens before any credential is known.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { AppEnv } from "../../app-env";
import { operation } from "../request/operation";
import { rights } from "../route-rights";

/** The discovery document (the paths are relative to the host). */
export const DISCOVERY = {
  "modules.v1": "/api/registry/v1/modules/",
  "tfe.v2": "/api/v2/",
  "tfe.v2.1": "/api/v2/",
  "tfe.v2.2": "/api/v2/",
} as const;

export const discoveryApp = new Hono<AppEnv>();

discoveryApp.get(
  "/.well-known/terraform.json",
  rights({ caller: "public" }),
  operation({
    tag: "discovery",
    summary: "Terraform remote service discovery (B12)",
    answers: {
      200: {
        description: "The services this host offers",
        contentType: "application/json",
        schema: v.strictObject({
          "modules.v1": v.literal(DISCOVERY["modules.v1"]),
          "tfe.v2": v.literal(DISCOVERY["tfe.v2"]),
          "tfe.v2.1": v.literal(DISCOVERY["tfe.v2.1"]),
          "tfe.v2.2": v.literal(DISCOVERY["tfe.v2.2"]),
        }),
      },
    },
  }),
  (c) => c.json(DISCOVERY),
);
