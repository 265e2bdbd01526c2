/**
 * host/keyway-krl-sync on its own (decision S23): a local HTTP server answers what each
 * case needs, and the installed KRL must change only for a KRL `ssh-keygen -Q -l` parses
 * whose krl_version is not lower; every refusal keeps the old file byte for byte and exits
 * with the documented code. The sshd end-to-end test (krl-sshd.test.ts) runs it against
 * the real Worker. Needs curl and ssh-keygen; never skips (B7).
 */
import { readdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeKrl } from "../../../src/lib/sshwire/krl";
import { findBinary, OpensshSandbox, runCommand } from "../../support/openssh";
import { blobOfLine, fixtureText } from "../../unit/lib/support/fixtures";

const SYNC = path.resolve(import.meta.dirname, "../../../host/keyway-krl-sync");

let server: Server;
let base: string;
let box: OpensshSandbox;
/** What the server answers next: status and body. */
let answer: { status: number; body: Uint8Array } = { status: 200, body: new Uint8Array(0) };

function krl(version: bigint, serials: bigint[] = [], generatedDate = 1_800_000_000n): Uint8Array {
  return encodeKrl({
    krlVersion: version,
    generatedDate,
    certificates: serials.length
      ? [{ caKey: blobOfLine(fixtureText("keys/ed25519.pub")), serials: serials.map((s) => ({ lo: s, hi: s })) }]
      : [],
  });
}

async function sync(file: string, url = `${base}/v1/ssh/krl`, options: string[] = []) {
  return runCommand(SYNC, [...options, url, box.path(file)], { env: { PATH: process.env.PATH } });
}

async function installed(file: string): Promise<Buffer> {
  return readFile(box.path(file));
}

beforeAll(async () => {
  findBinary("curl", "curl");
  findBinary("ssh-keygen");
  box = await OpensshSandbox.create("keyway-krl-sync-");
  server = createServer((req, res) => {
    // B20: redirects within the origin, to another host and to another scheme.
    const port = (server.address() as AddressInfo).port;
    const location = {
      "/redirect-same": `http://127.0.0.1:${port}/v1/ssh/krl`,
      "/redirect-host": `http://localhost:${port}/v1/ssh/krl`,
      "/redirect-scheme": `https://127.0.0.1:${port}/v1/ssh/krl`,
      "/redirect-loop": `http://127.0.0.1:${port}/redirect-loop`,
    }[req.url ?? ""];
    if (location) {
      res.writeHead(302, { Location: location, "Content-Length": "0" });
      res.end();
      return;
    }
    res.writeHead(answer.status, {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(answer.body.length),
    });
    res.end(Buffer.from(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await box.dispose();
});

describe("keyway-krl-sync", () => {
  it("installs a first KRL, a newer one, and the same version again; refuses an older one (exit 5)", async () => {
    answer = { status: 200, body: krl(5n, [10n]) };
    let r = await sync("a.krl");
    expect(r.code, r.stderr).toBe(0);
    expect(new Uint8Array(await installed("a.krl"))).toEqual(krl(5n, [10n]));

    answer = { status: 200, body: krl(7n, [10n, 11n]) };
    r = await sync("a.krl");
    expect(r.code, r.stderr).toBe(0);
    expect(new Uint8Array(await installed("a.krl"))).toEqual(krl(7n, [10n, 11n]));

    answer = { status: 200, body: krl(7n, [10n, 11n]) };
    r = await sync("a.krl");
    expect(r.code, r.stderr).toBe(0);

    answer = { status: 200, body: krl(6n, []) };
    r = await sync("a.krl");
    expect(r.code).toBe(5);
    expect(r.stderr).toContain("krl_version 6 is lower than the installed 7");
    expect(new Uint8Array(await installed("a.krl"))).toEqual(krl(7n, [10n, 11n]));
  });

  it("compares krl_version as a uint64, beyond the shell's arithmetic", async () => {
    answer = { status: 200, body: krl(18446744073709551615n) };
    expect((await sync("big.krl")).code).toBe(0);
    answer = { status: 200, body: krl(9223372036854775808n) };
    const r = await sync("big.krl");
    expect(r.code).toBe(5);
    expect(new Uint8Array(await installed("big.krl"))).toEqual(krl(18446744073709551615n));
  });

  it("keeps the installed KRL when the service is unreachable or answers an HTTP error (exit 3)", async () => {
    answer = { status: 200, body: krl(3n, [1n]) };
    expect((await sync("b.krl")).code).toBe(0);
    const before = await installed("b.krl");

    let r = await sync("b.krl", "http://127.0.0.1:9/v1/ssh/krl");
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("download of http://127.0.0.1:9/v1/ssh/krl failed");
    expect(await installed("b.krl")).toEqual(before);

    answer = { status: 503, body: new TextEncoder().encode('{"errors":["storage unavailable"]}') };
    r = await sync("b.krl");
    expect(r.code).toBe(3);
    expect(await installed("b.krl")).toEqual(before);
  });

  it("keeps the installed KRL on a garbage answer or a truncated KRL (exit 4)", async () => {
    answer = { status: 200, body: krl(3n, [1n]) };
    expect((await sync("c.krl")).code).toBe(0);
    const before = await installed("c.krl");

    answer = { status: 200, body: new TextEncoder().encode("<html>captive portal</html>\n") };
    let r = await sync("c.krl");
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("is not a KRL ssh-keygen accepts");
    expect(await installed("c.krl")).toEqual(before);

    const full = krl(9n, [1n, 2n, 99n]);
    for (const cut of [full.length - 3, 40, 8]) {
      answer = { status: 200, body: full.subarray(0, cut) };
      r = await sync("c.krl");
      expect(r.code, `cut at ${cut}`).toBe(4);
      expect(await installed("c.krl")).toEqual(before);
    }

    answer = { status: 200, body: new Uint8Array(0) };
    expect((await sync("c.krl")).code).toBe(4);
    expect(await installed("c.krl")).toEqual(before);
  });

  it("replaces an installed file that is not a KRL, leaves no temporary files, and checks its arguments (exit 2)", async () => {
    await box.write("d.krl", "not a krl\n", 0o644);
    answer = { status: 200, body: krl(1n) };
    expect((await sync("d.krl")).code).toBe(0);
    expect(new Uint8Array(await installed("d.krl"))).toEqual(krl(1n));
    expect((await readdir(box.dir)).filter((f) => f.startsWith(".keyway-krl"))).toEqual([]);

    expect((await runCommand(SYNC, [base], { env: { PATH: process.env.PATH } })).code).toBe(2);
    expect((await runCommand(SYNC, ["ftp://x/krl", box.path("d.krl")], { env: { PATH: process.env.PATH } })).code).toBe(
      2,
    );
    expect((await sync("no-such-dir/e.krl")).code).toBe(6);
  });
});

describe("keyway-krl-sync: HTTPS, redirects and bounds (B20)", () => {
  it("refuses plain http:// to a host that is not loopback (exit 8) unless -dev", async () => {
    answer = { status: 200, body: krl(1n) };
    let r = await sync("f.krl", "http://keyway.example.com/v1/ssh/krl");
    expect(r.code).toBe(8);
    expect(r.stderr).toContain("refusing plain http:// to keyway.example.com");
    r = await sync("f.krl", "HTTP://Keyway.Example.com:8080/v1/ssh/krl");
    expect(r.code).toBe(8);
    // Loopback spellings are allowed (the node tests use 127.0.0.1).
    expect((await sync("f.krl")).code).toBe(0);

    // -dev: plain HTTP to a host's own non-loopback address.
    const address = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    expect(address, "a non-loopback IPv4 address for the -dev case").toBeDefined();
    const lan = createServer((_req, res) => {
      res.writeHead(200, { "Content-Length": String(answer.body.length) });
      res.end(Buffer.from(answer.body));
    });
    await new Promise<void>((resolve) => lan.listen(0, address, resolve));
    try {
      const url = `http://${address}:${(lan.address() as AddressInfo).port}/v1/ssh/krl`;
      answer = { status: 200, body: krl(2n) };
      expect((await sync("f.krl", url)).code).toBe(8);
      r = await sync("f.krl", url, ["-dev"]);
      expect(r.code, r.stderr).toBe(0);
      expect(new Uint8Array(await installed("f.krl"))).toEqual(krl(2n));
    } finally {
      await new Promise((resolve) => lan.close(resolve));
    }
  });

  it("follows a redirect within the origin, never to another host or scheme (exit 9), nor forever", async () => {
    answer = { status: 200, body: krl(4n) };
    let r = await sync("g.krl", `${base}/redirect-same`);
    expect(r.code, r.stderr).toBe(0);
    expect(new Uint8Array(await installed("g.krl"))).toEqual(krl(4n));
    const before = await installed("g.krl");
    answer = { status: 200, body: krl(5n) };
    for (const hop of ["redirect-host", "redirect-scheme"]) {
      r = await sync("g.krl", `${base}/${hop}`);
      expect(r.code, hop).toBe(9);
      expect(r.stderr).toContain("refusing the redirect");
      expect(await installed("g.krl")).toEqual(before);
    }
    r = await sync("g.krl", `${base}/redirect-loop`);
    expect(r.code).toBe(9);
    expect(r.stderr).toContain("more than 5 redirects");
  });

  it("verifies HTTPS against -cacert: a self-signed service installs with it, fails without (exit 3)", async () => {
    const key = box.path("tls-key.pem");
    const cert = box.path("tls-cert.pem");
    const gen = await runCommand(findBinary("openssl", "openssl"), [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ]);
    expect(gen.code, gen.stderr).toBe(0);
    const tls = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
      res.writeHead(200, { "Content-Length": String(answer.body.length) });
      res.end(Buffer.from(answer.body));
    });
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/v1/ssh/krl`;
      answer = { status: 200, body: krl(6n) };
      let r = await sync("h.krl", url);
      expect(r.code).toBe(3);
      r = await sync("h.krl", url, ["-cacert", cert]);
      expect(r.code, r.stderr).toBe(0);
      expect(new Uint8Array(await installed("h.krl"))).toEqual(krl(6n));
      // A -cacert that is not a readable file is a usage error.
      expect((await sync("h.krl", url, ["-cacert", box.path("missing.pem")])).code).toBe(2);
      expect((await sync("h.krl", url, ["-cacert"])).code).toBe(2);
      expect((await sync("h.krl", url, ["-bogus"])).code).toBe(2);
    } finally {
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it("refuses a krl_version more than 1,000,000 above the installed one (exit 10)", async () => {
    answer = { status: 200, body: krl(5n) };
    expect((await sync("i.krl")).code).toBe(0);
    answer = { status: 200, body: krl(1_000_006n) };
    const r = await sync("i.krl");
    expect(r.code).toBe(10);
    expect(r.stderr).toContain("more than 1,000,000 above the installed 5");
    expect(new Uint8Array(await installed("i.krl"))).toEqual(krl(5n));
    answer = { status: 200, body: krl(1_000_005n) };
    expect((await sync("i.krl")).code).toBe(0);
    // The forged KRL of the review (version near 2^63) over a real one.
    answer = { status: 200, body: krl(9_223_372_036_854_775_000n) };
    expect((await sync("i.krl")).code).toBe(10);
  });

  it("refuses a generated_date more than 7 days older than the installed one's (exit 11)", async () => {
    const date = 1_800_000_000n;
    const week = 7n * 86_400n;
    answer = { status: 200, body: krl(5n, [], date) };
    expect((await sync("j.krl")).code).toBe(0);
    answer = { status: 200, body: krl(6n, [], date - week - 1n) };
    const r = await sync("j.krl");
    expect(r.code).toBe(11);
    expect(r.stderr).toContain("more than 7 days older");
    expect(new Uint8Array(await installed("j.krl"))).toEqual(krl(5n, [], date));
    answer = { status: 200, body: krl(6n, [], date - week) };
    expect((await sync("j.krl")).code).toBe(0);
  });

  it("-reset installs, once, any KRL that parses: recovery from a forged version", async () => {
    answer = { status: 200, body: krl(18_446_744_073_709_551_615n, [], 4_000_000_000n) };
    expect((await sync("k.krl")).code).toBe(0);
    answer = { status: 200, body: krl(3n, [7n]) };
    expect((await sync("k.krl")).code).toBe(5);
    let r = await sync("k.krl", undefined, ["-reset"]);
    expect(r.code, r.stderr).toBe(0);
    expect(new Uint8Array(await installed("k.krl"))).toEqual(krl(3n, [7n]));
    // Without -reset the bounds apply again.
    answer = { status: 200, body: krl(2n) };
    expect((await sync("k.krl")).code).toBe(5);
    // -reset still needs a KRL that parses.
    answer = { status: 200, body: new TextEncoder().encode("garbage") };
    r = await sync("k.krl", undefined, ["-reset"]);
    expect(r.code).toBe(4);
    expect(new Uint8Array(await installed("k.krl"))).toEqual(krl(3n, [7n]));
  });
});
