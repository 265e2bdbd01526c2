/**
 * host/keyway-krl-sync on its own (decision S23): a local HTTP server answers what each
 * case needs, and the installed KRL must change only for a KRL `ssh-keygen -Q -l` parses
 * whose krl_version is not lower; every refusal keeps the old file byte for byte and exits
 * with the documented code. The sshd end-to-end test (krl-sshd.test.ts) runs it against
 * the real Worker. Needs curl and ssh-keygen; never skips (B7).
 */
import { readdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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

function krl(version: bigint, serials: bigint[] = []): Uint8Array {
  return encodeKrl({
    krlVersion: version,
    generatedDate: 1_800_000_000n,
    certificates: serials.length
      ? [{ caKey: blobOfLine(fixtureText("keys/ed25519.pub")), serials: serials.map((s) => ({ lo: s, hi: s })) }]
      : [],
  });
}

async function sync(file: string, url = `${base}/v1/ssh/krl`) {
  return runCommand(SYNC, [url, box.path(file)], { env: { PATH: process.env.PATH } });
}

async function installed(file: string): Promise<Buffer> {
  return readFile(box.path(file));
}

beforeAll(async () => {
  findBinary("curl", "curl");
  findBinary("ssh-keygen");
  box = await OpensshSandbox.create("keyway-krl-sync-");
  server = createServer((_req, res) => {
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
