/**
 * The extractor in workerd, whose DecompressionStream behaves differently from Node's
 * (it buffers written input without backpressure and hands out output in 4 KiB chunks).
 */
import { describe, expect, it } from "vitest";
import { extractModuleTarball } from "../../../../src/lib/tarball";
import { buildTar, buildTarball, countingStream, gzip, noise } from "../../../support/tarball";

const MiB = 1024 * 1024;
const MAIN = 'resource "null_resource" "x" {}\n';

/**
 * A gzip bomb: `entries` honest 9 MiB entries of zeros after a main.tf, compressed as it
 * is written so the raw tar (over 100 MiB) never sits in memory.
 */
async function zeroEntriesTarball(entries: number): Promise<Uint8Array> {
  const cs = new CompressionStream("gzip");
  const writer = cs.writable.getWriter();
  const output = new Response(cs.readable).arrayBuffer();
  await writer.write(buildTar({ "main.tf": MAIN }, { endBlocks: 0 }));
  const chunk = new Uint8Array(MiB);
  for (let e = 0; e < entries; e++) {
    await writer.write(buildTar([{ path: `blob-${e}.bin`, declaredSize: 9 * MiB }], { endBlocks: 0 }));
    for (let i = 0; i < 9; i++) await writer.write(chunk);
  }
  await writer.write(new Uint8Array(1024));
  await writer.close();
  return new Uint8Array(await output);
}

describe("extractModuleTarball in workerd", () => {
  it("reads a module from bytes and from a stream of small chunks", async () => {
    const tarball = await buildTarball(
      { "main.tf": MAIN, "modules/a/main.tf": "# a\n", "docs/big.md": noise(300_000) },
      { prefix: "./", directories: true },
    );
    for (const input of [tarball, countingStream(tarball, 333).stream]) {
      const result = await extractModuleTarball(input);
      if (!result.ok) throw new Error(result.error);
      expect([...result.files.keys()]).toEqual(["main.tf", "modules/a/main.tf"]);
    }
  });

  it("stops pulling input once a header claims too much", async () => {
    const tar = buildTar(
      [
        { path: "main.tf", content: MAIN },
        { path: "x.bin", declaredSize: 1024 * MiB },
      ],
      { endBlocks: 0 },
    );
    const tarball = await gzip(new Uint8Array([...tar, ...noise(2 * MiB)]));
    const { stream, pulled } = countingStream(tarball, 1024);
    expect(await extractModuleTarball(stream)).toEqual({ ok: false, error: "archive unpacks to more than 50 MiB" });
    expect(pulled()).toBeLessThan(tarball.length / 1024 / 10);
  });

  // The inflation waits for each 4 KiB chunk of DecompressionStream output with a macrotask
  // (byte-stream.ts); in the test runtime of @cloudflare/vitest-plugin 1.5.0 (workerd
  // 1.20261102) a macrotask turn costs about 3 ms instead of 0.2 ms, so this takes ~30 s
  // on a busy machine instead of ~3 s. The limit asserts nothing about speed.
  it("inflates a gzip bomb only as far as the 50 MiB limit", async () => {
    // 12 × 9 MiB = 108 MiB unpacked from about 100 KiB; the sixth entry crosses 50 MiB.
    const bomb = await zeroEntriesTarball(12);
    const { stream, pulled } = countingStream(bomb, 1024);
    const start = performance.now();
    expect(await extractModuleTarball(stream)).toEqual({ ok: false, error: "archive unpacks to more than 50 MiB" });
    const elapsed = performance.now() - start;
    const total = Math.ceil(bomb.length / 1024);
    // About half the input (the part holding the first five entries) and no more.
    expect(pulled()).toBeLessThan(total * 0.6);
    console.log(
      `gzip bomb (${bomb.length} bytes → 108 MiB) refused after ${pulled()}/${total} KiB, ${elapsed.toFixed(0)} ms`,
    );
  }, 120_000);

  it("refuses multi-member gzip, which workerd's DecompressionStream does not support", async () => {
    const first = await gzip(buildTar({ "main.tf": MAIN }, { endBlocks: 0 }));
    const second = await gzip(buildTar({ "b.tf": MAIN }));
    const result = await extractModuleTarball(new Uint8Array([...first, ...second]));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^corrupt gzip data/);
  });
});
