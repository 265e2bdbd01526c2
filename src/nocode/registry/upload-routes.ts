/**
 * The route of the single-use upload link of module tarballs (decisions N9, N2a, B5):
 * `PUT /api/v2/uploads/:token`, where the link is the credential. What it does, and why
 * each attempt writes its own object (B16), is told in ./uploads.ts.
 */
import { Hono } from "hono";
import type { NocodeEnv } from "../env";
import { operation } from "../request/operation";
import { rights } from "../route-rights";
import { receiveUpload } from "./uploads";

/** Routes of the upload link (tokenless, N2a). */
export const uploadRoutes = new Hono<NocodeEnv>();

const upload = operation({
  tag: "registry",
  summary: "Upload a version's tarball through its single-use link (N9; the link is the credential)",
  description: "The body is the gzip tarball (at most 10 MiB, B5). Ingestion follows on the queue (N4).",
  answers: { 200: { description: "Received; the version is now being ingested" } },
  errors: [400, 404, 413],
});

uploadRoutes.put("/uploads/:token", rights({ caller: "public" }), upload, async (c) => {
  await receiveUpload(c.var.db, c.env, c.var.requestId, c.req.param("token"), c.req.raw);
  return c.body(null, 200);
});
