/**
 * A real HTTP server on 127.0.0.1 for worker tests whose Worker fetches documents
 * (decision S25: OIDC discovery and JWKS). It runs in Node (vitest globalSetup) and serves
 * whatever a test put at a path; tests reach it by the URL `inject("fixtureHttpUrl")` gives.
 *
 * Control (from the test, by fetch): `PUT /_ctl/doc?path=/p` with JSON
 * `{status?, body?, headers?, delayMs?, location?}` sets the answer to `GET /p`;
 * `GET /_ctl/hits?path=/p` answers how many GETs `/p` received. Every test uses its own
 * paths, so tests do not share state.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

interface Doc {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
  location?: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    fixtureHttpUrl: string;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

let server: Server | undefined;

export async function setup(project: TestProject): Promise<void> {
  const docs = new Map<string, Doc>();
  const hits = new Map<string, number>();
  server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/_ctl/doc" && req.method === "PUT") {
      docs.set(url.searchParams.get("path") ?? "/", JSON.parse(await readBody(req)) as Doc);
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === "/_ctl/hits") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ hits: hits.get(url.searchParams.get("path") ?? "/") ?? 0 }));
      return;
    }
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const doc = docs.get(url.pathname);
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    if (doc.delayMs) await new Promise((r) => setTimeout(r, doc.delayMs));
    const headers: Record<string, string> = { "content-type": "application/json", ...doc.headers };
    if (doc.location) headers.location = doc.location;
    res.writeHead(doc.status ?? 200, headers);
    res.end(typeof doc.body === "string" ? doc.body : JSON.stringify(doc.body ?? {}));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("fixtureHttpUrl", `http://127.0.0.1:${port}`);
}

export async function teardown(): Promise<void> {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
