import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extractModuleTarball, MODULE_TARBALL_LIMITS, normaliseEntryPath } from "../../../../src/lib/tarball";
import { buildTar, buildTarball, countingStream, gzip, noise } from "../../../support/tarball";

const MiB = 1024 * 1024;
const MAIN = 'resource "null_resource" "x" {}\n';

async function expectError(bytes: Uint8Array | ReadableStream<Uint8Array>, message: string) {
  const result = await extractModuleTarball(bytes);
  expect(result).toEqual({ ok: false, error: message });
}

describe("extractModuleTarball: accepted archives", () => {
  it("keeps .tf files at every depth, strips a leading ./ and skips other files", async () => {
    const tarball = await buildTarball(
      {
        "main.tf": MAIN,
        "variables.tf": 'variable "a" {}\n',
        "README.md": "# module\n",
        "modules/net/main.tf": "# sub\n",
        "examples/basic/main.tf.json": "{}",
      },
      { prefix: "./", directories: true },
    );
    const result = await extractModuleTarball(tarball);
    if (!result.ok) throw new Error(result.error);
    expect([...result.files.keys()].sort()).toEqual(["main.tf", "modules/net/main.tf", "variables.tf"]);
    expect(result.files.get("main.tf")).toBe(MAIN);
    expect(result.tfJsonFiles).toEqual(["examples/basic/main.tf.json"]);
    // ./, modules/, modules/net/, examples/, examples/basic/ + 5 files
    expect(result.entries).toBe(10);
  });

  it("accepts a stream (e.g. an R2 body) and gives the same result as bytes", async () => {
    const tarball = await buildTarball({ "main.tf": MAIN, "outputs.tf": 'output "o" { value = 1 }\n' });
    const fromBytes = await extractModuleTarball(tarball);
    const fromStream = await extractModuleTarball(countingStream(tarball, 7).stream);
    expect(fromStream).toEqual(fromBytes);
    expect(fromBytes.ok).toBe(true);
  });

  it("reads pax and GNU long names", async () => {
    const deep = `modules/${"a".repeat(60)}/${"b".repeat(60)}/main.tf`;
    for (const longName of ["pax", "gnu"] as const) {
      const tarball = await buildTarball([
        { path: "main.tf", content: MAIN },
        { path: deep, content: "# deep\n", longName },
      ]);
      const result = await extractModuleTarball(tarball);
      if (!result.ok) throw new Error(result.error);
      expect(result.files.get(deep)).toBe("# deep\n");
      expect(result.entries).toBe(2); // metadata entries are not counted
    }
  });

  it("accepts an archive without end-of-archive blocks", async () => {
    const result = await extractModuleTarball(await gzip(buildTar({ "main.tf": MAIN }, { endBlocks: 0 })));
    expect(result.ok).toBe(true);
  });

  it("drops a UTF-8 byte order mark", async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(MAIN)]);
    const result = await extractModuleTarball(await buildTarball({ "main.tf": bom }));
    expect(result.ok && result.files.get("main.tf")).toBe(MAIN);
  });

  it("accepts exactly the limits", async () => {
    const atEntryLimit = await buildTarball({ "main.tf": MAIN }, { fillerEntries: 999 });
    expect((await extractModuleTarball(atEntryLimit)).ok).toBe(true);
    const atTfLimit = await buildTarball([{ path: "main.tf", zeros: MiB }]);
    // A zero-filled .tf is valid UTF-8 (NULs), so only the size matters here.
    expect((await extractModuleTarball(atTfLimit)).ok).toBe(true);
    const atUnpackedLimit = await buildTarball([
      { path: "main.tf", content: MAIN },
      { path: "blob.bin", zeros: 50 * MiB - MAIN.length },
    ]);
    const result = await extractModuleTarball(atUnpackedLimit);
    expect(result.ok && result.unpackedBytes).toBe(50 * MiB);
  });
});

describe("extractModuleTarball: refused archives", () => {
  it("refuses what is not gzip", async () => {
    await expectError(buildTar({ "main.tf": MAIN }), "not a gzip archive");
    await expectError(new Uint8Array(0), "not a gzip archive");
    await expectError(new TextEncoder().encode("PK\x03\x04 zip file"), "not a gzip archive");
    await expectError(countingStream(buildTar({ "main.tf": MAIN })).stream, "not a gzip archive");
  });

  it("refuses corrupt or truncated gzip data", async () => {
    const tarball = await buildTarball({ "main.tf": MAIN.repeat(200) });
    const corrupt = tarball.slice();
    corrupt.fill(0xff, 10, 40);
    const result = await extractModuleTarball(corrupt);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^corrupt gzip data|^gzip data is not a tar archive/);
    const truncated = await extractModuleTarball(tarball.slice(0, tarball.length - 30));
    expect(truncated.ok).toBe(false);
  });

  it("refuses gzip data that is not a tar", async () => {
    await expectError(await gzip(new TextEncoder().encode("hello ".repeat(200))), "gzip data is not a tar archive");
    await expectError(await gzip(new TextEncoder().encode("hi")), "not a tar archive (too short)");
  });

  it("refuses a header with a bad checksum after the first", async () => {
    const tar = buildTar({ "main.tf": MAIN, "b.tf": MAIN });
    tar[1024 + 10] = 0x41; // inside the second header's name
    await expectError(await gzip(tar), "not a tar archive (bad header checksum)");
  });

  it("refuses absolute paths and .. components", async () => {
    await expectError(
      await buildTarball({ "main.tf": MAIN, "../x.tf": MAIN }),
      'archive entry "../x.tf" escapes the module directory',
    );
    await expectError(
      await buildTarball({ "main.tf": MAIN, "a/../../x.tf": MAIN }),
      'archive entry "a/../../x.tf" escapes the module directory',
    );
    await expectError(
      await buildTarball({ "main.tf": MAIN, "..\\x.tf": MAIN }),
      'archive entry "..\\x.tf" escapes the module directory',
    );
    await expectError(
      await buildTarball({ "main.tf": MAIN, "/etc/x.tf": MAIN }),
      'archive entry "/etc/x.tf" has an absolute path',
    );
    await expectError(
      await buildTarball({ "main.tf": MAIN }, { prefix: "../" }),
      'archive entry "../main.tf" escapes the module directory',
    );
    // Hidden in a pax path record: the long name is what counts.
    const long = `${"d/".repeat(60)}../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../x.tf`;
    const result = await extractModuleTarball(
      await buildTarball([
        { path: "main.tf", content: MAIN },
        { path: long, content: MAIN },
      ]),
    );
    expect(result).toEqual({ ok: false, error: `archive entry "${long}" escapes the module directory` });
  });

  it("refuses links, devices, FIFOs and unknown entry types", async () => {
    const cases = [
      [{ path: "link.tf", type: "symlink", linkTarget: "/etc/passwd" }, 'archive entry "link.tf" is a symbolic link'],
      [{ path: "./hard.tf", type: "hardlink", linkTarget: "main.tf" }, 'archive entry "hard.tf" is a hard link'],
      [{ path: "tty", type: "char-device" }, 'archive entry "tty" is a device'],
      [{ path: "sda", type: "block-device" }, 'archive entry "sda" is a device'],
      [{ path: "pipe", type: "fifo" }, 'archive entry "pipe" is a FIFO'],
      [{ path: "sparse.tf", typeflag: "S" }, 'archive entry "sparse.tf" has an unsupported type "S"'],
    ] as const;
    for (const [spec, message] of cases) {
      await expectError(await buildTarball([{ path: "main.tf", content: MAIN }, spec]), message);
    }
  });

  it("refuses more than 1000 entries, directories included", async () => {
    await expectError(
      await buildTarball({ "main.tf": MAIN }, { fillerEntries: 1000 }),
      "archive has more than 1000 entries",
    );
    // 999 files plus the filler/ directory entry.
    await expectError(
      await buildTarball({ "main.tf": MAIN }, { fillerEntries: 999, directories: true }),
      "archive has more than 1000 entries",
    );
  });

  it("refuses a .tf file over 1 MiB, from its header", async () => {
    await expectError(await buildTarball([{ path: "main.tf", zeros: MiB + 1 }]), "main.tf is larger than 1 MiB");
    await expectError(
      await buildTarball([
        { path: "main.tf", content: MAIN },
        { path: "./modules/x/big.tf", zeros: 2 * MiB },
      ]),
      "modules/x/big.tf is larger than 1 MiB",
    );
  });

  it("refuses more than 50 MiB unpacked", async () => {
    await expectError(
      await buildTarball([
        { path: "main.tf", content: MAIN },
        { path: "a.bin", zeros: 30 * MiB },
        { path: "b.bin", zeros: 21 * MiB },
      ]),
      "archive unpacks to more than 50 MiB",
    );
  });

  it("stops reading as soon as a header claims too much", async () => {
    // The header claims 1 GiB; 4 MiB of incompressible data follow, so the compressed
    // stream is long enough to see how much of it was pulled.
    const tar = buildTar(
      [
        { path: "main.tf", content: MAIN },
        { path: "bomb.bin", declaredSize: 1024 * MiB },
      ],
      { endBlocks: 0 },
    );
    const tarball = await gzip(new Uint8Array([...tar, ...noise(4 * MiB)]));
    const { stream, pulled } = countingStream(tarball, 1024);
    await expectError(stream, "archive unpacks to more than 50 MiB");
    expect(pulled()).toBeLessThan(tarball.length / 1024 / 10);
  });

  it("refuses a GNU base-256 size", async () => {
    const tarball = await buildTarball(
      [
        { path: "main.tf", content: MAIN },
        { path: "huge.bin", declaredSize: 2 ** 40 },
      ],
      { format: "gnu", endBlocks: 0 },
    );
    await expectError(tarball, "archive unpacks to more than 50 MiB");
  });

  it("refuses an archive whose data stops early", async () => {
    const tar = buildTar(
      [
        { path: "main.tf", content: MAIN },
        { path: "b.tf", content: "x".repeat(4000) },
      ],
      { endBlocks: 0 },
    );
    await expectError(await gzip(tar.slice(0, 1024 + 512 + 1000)), "archive is truncated");
  });

  it("requires a .tf file at the archive root", async () => {
    await expectError(
      await buildTarball({ "modules/x/main.tf": MAIN, "README.md": "x" }),
      "no .tf file at the archive root",
    );
    // GitHub-style archives with one top-level directory are not module roots.
    await expectError(
      await buildTarball({ "terraform-aws-vpc-5.0.0/main.tf": MAIN }, { directories: true }),
      "no .tf file at the archive root",
    );
    await expectError(await buildTarball({}), "no .tf file at the archive root");
  });

  it("refuses a .tf file that is not UTF-8", async () => {
    await expectError(
      await buildTarball({ "main.tf": new Uint8Array([0x23, 0xff, 0xfe, 0x0a]) }),
      "main.tf is not valid UTF-8",
    );
  });

  it("honours overridden limits", async () => {
    const result = await extractModuleTarball(await buildTarball({ "main.tf": MAIN, "b.tf": MAIN }), { maxEntries: 1 });
    expect(result).toEqual({ ok: false, error: "archive has more than 1 entries" });
    expect(MODULE_TARBALL_LIMITS).toEqual({ maxUnpackedBytes: 50 * MiB, maxEntries: 1000, maxTfFileBytes: MiB });
  });
});

describe("normaliseEntryPath", () => {
  it.each([
    ["./main.tf", "main.tf"],
    ["././a//b/./c.tf", "a/b/c.tf"],
    ["./", ""],
    ["modules/x/", "modules/x"],
    ["a..b.tf", "a..b.tf"],
  ])("%s → %s", (raw, expected) => {
    expect(normaliseEntryPath(raw)).toEqual({ ok: true, path: expected });
  });
  it.each(["/x.tf", "\\x.tf", "C:/x.tf", "C:\\x.tf"])("%s is absolute", (raw) => {
    expect(normaliseEntryPath(raw)).toEqual({ ok: false, error: `archive entry "${raw}" has an absolute path` });
  });
});

// Real archives from GNU tar, in each format it writes: the builder above is ours, so
// check the parser against an independent writer too.
describe("extractModuleTarball: GNU tar archives", () => {
  const work = mkdtempSync(path.join(tmpdir(), "kw-tar-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const tar = (args: string[]) => {
    try {
      execFileSync("tar", args, { stdio: "pipe" });
    } catch (cause) {
      throw new Error(`GNU tar is needed for this test (apt-get install tar): ${String(cause)}`);
    }
  };
  const deep = `modules/${"n".repeat(70)}/${"m".repeat(70)}`;
  const src = path.join(work, "src");
  mkdirSync(path.join(src, deep), { recursive: true });
  writeFileSync(path.join(src, "main.tf"), MAIN);
  writeFileSync(path.join(src, "README.md"), "# x\n");
  writeFileSync(path.join(src, deep, "main.tf"), "# deep\n");

  it.each(["gnu", "pax", "ustar", "oldgnu"])("reads --format=%s", async (format) => {
    const out = path.join(work, `${format}.tar.gz`);
    // ustar cannot store the 150-byte deep path; leave it out there.
    tar(["-czf", out, `--format=${format}`, ...(format === "ustar" ? ["--exclude=./modules"] : []), "-C", src, "."]);
    const result = await extractModuleTarball(new Uint8Array(readFileSync(out)));
    if (!result.ok) throw new Error(result.error);
    expect(result.files.get("main.tf")).toBe(MAIN);
    if (format !== "ustar") expect(result.files.get(`${deep}/main.tf`)).toBe("# deep\n");
  });

  it("refuses a symlink written by tar", async () => {
    const dir = path.join(work, "link");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "main.tf"), MAIN);
    symlinkSync("main.tf", path.join(dir, "link.tf"));
    const out = path.join(work, "link.tar.gz");
    tar(["-czf", out, "-C", dir, "main.tf", "link.tf"]);
    await expectError(new Uint8Array(readFileSync(out)), 'archive entry "link.tf" is a symbolic link');
  });
});
