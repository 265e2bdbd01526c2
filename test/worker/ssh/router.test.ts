import { describe, expect, it } from "vitest";
import { NAME_PATTERN, type VaultHandler, type VaultRoute, VaultRouter } from "../../../src/ssh/router";
import { vaultRoutes } from "../../../src/ssh/routes";

/** The route a plain scan of the table in order picks (what the router did before its literal index). */
function scanned(rest: string) {
  return vaultRoutes.find(
    (r) =>
      r.mounted &&
      new RegExp(
        `^${r.pattern
          .split("/")
          .map((s) => (s.startsWith(":") ? `(?:${r.params?.[s.slice(1)] ?? NAME_PATTERN})` : s))
          .join("/")}$`,
      ).test(rest),
  );
}

describe("the /v1 route table", () => {
  it("routes every mount path to the route a scan in table order would pick", () => {
    const router = new VaultRouter(vaultRoutes);
    const rests = [
      "verify",
      "public_key",
      "config/ca",
      "config/zeroaddress",
      "lookup",
      "roles",
      "roles/web",
      "creds/web",
      "sign/web",
      "issue/web",
      "tidy/dynamic-keys",
    ];
    for (const rest of rests) {
      const expected = scanned(rest);
      expect(expected, rest).toBeDefined();
      expect(router.match(`ssh/${rest}`, ["ssh"])?.route, rest).toBe(expected);
    }
  });
});

const handler: VaultHandler = async () => new Response(null);
const route = (pattern: string, mounted = true): VaultRoute => ({
  pattern,
  mounted,
  operations: { read: handler },
  docs: { operations: {} },
});

describe("VaultRouter", () => {
  it("matches literal and parameter routes under a mount, each in exactly one spelling (S2b)", () => {
    const verify = route("verify");
    const role = route("roles/:name");
    const router = new VaultRouter([verify, role, route("sys/leases/revoke", false)]);
    expect(router.match("ssh/verify", ["ssh"])).toEqual({ route: verify, params: {}, mount: "ssh" });
    expect(router.match("ssh/verify/", ["ssh"])).toBeNull();
    expect(router.match("ssh/roles/web/", ["ssh"])).toBeNull();
    expect(router.match("ssh/verify//", ["ssh"])).toBeNull();
    expect(router.match("ssh/roles/web", ["ssh"])).toEqual({ route: role, params: { name: "web" }, mount: "ssh" });
    expect(router.match("other/verify", ["ssh"])).toBeNull();
    expect(router.match("sys/leases/revoke", ["ssh"])?.mount).toBe("");
    expect(router.match("verify", ["ssh"])).toBeNull();
  });

  it("keeps table order when a parameter route listed first also matches a literal path", () => {
    const byName = route("roles/:name");
    const literal = route("roles/special");
    const router = new VaultRouter([byName, literal]);
    expect(router.match("ssh/roles/special", ["ssh"])).toEqual({
      route: byName,
      params: { name: "special" },
      mount: "ssh",
    });
  });
});
