/**
 * `GET /v1/sys/internal/specs/openapi` (decisions B14, S16a): the /v1 OpenAPI document,
 * unauthenticated, at Vault's path and, as Vault serves it, outside the envelope.
 */

import { IsolateCache, MAX_CACHE_BYTES } from "../../lib/isolate-cache";
import { configuredMounts, type VaultRoute } from "../router";
import { buildOpenApiDocument } from "./document";
import { rawJson } from "./schemas";

/**
 * The serialised document per SSH_MOUNTS value. The route table is fixed per isolate and
 * the key is server configuration, so the cache holds one entry in practice (N2b: an
 * unauthenticated read fills only caches keyed by server-side values).
 */
const serialised = new IsolateCache<string>({
  name: "ssh-openapi-document",
  maxEntries: 4,
  maxBytes: MAX_CACHE_BYTES,
  sizeOf: (text) => 2 * text.length,
});

/** The document's route; `table` is the whole /v1 route table, this route included. */
export function openApiRoutes(table: () => readonly VaultRoute[]): VaultRoute[] {
  return [
    {
      pattern: "sys/internal/specs/openapi",
      unauthenticated: ["read"],
      operations: {
        read: async (req) => {
          const key = req.env.SSH_MOUNTS ?? "";
          let text = serialised.peek(key);
          if (text === undefined) {
            text = JSON.stringify(buildOpenApiDocument(table(), configuredMounts(req.env.SSH_MOUNTS)));
            serialised.set(key, text);
          }
          return new Response(text, { status: 200, headers: { "Content-Type": "application/json" } });
        },
      },
      docs: {
        operations: {
          read: {
            summary: "This OpenAPI document",
            description: "OpenAPI 3.1, generated from the /v1 route table; the mounts are this deployment's.",
            responses: rawJson("the document", {
              type: "object",
              required: ["openapi", "info", "paths"],
              properties: {
                openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" },
                info: { type: "object" },
                paths: { type: "object" },
              },
            }),
          },
        },
      },
    },
  ];
}
