import { describe, expect, it } from "vitest";
import { type VaultHandler, VaultRouter, type VaultRoute } from "../../../src/ssh/router";
import { vaultRoutes } from "../../../src/ssh/routes";

const handler: VaultHandler = async () => new Response(null);
const route = (pattern: string, mounted = true): VaultRoute => ({ pattern, mounted, operations: { read: handler } });

describe("VaultRouter", () => {
  it("matches literal and parameter routes under a mount, with one trailing slash tolerated", () => {
    const verify = route("verify");
    const role = route("roles/:name");
    const router = new VaultRouter([verify, role, route("sys/leases/revoke", false)]);
    expect(router.match("ssh/verify", ["ssh"])).toEqual({ route: verify, params: {}, mount: "ssh" });
    expect(router.match("ssh/verify/", ["ssh"])?.route).toBe(verify);
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
    expect(router.match("ssh/roles/special", ["ssh"])).toEqual({ route: byName, params: { name: "special" }, mount: "ssh" });
  });

  it("routes every real path to the route the table scan would pick", () => {
    const router = new VaultRouter(vaultRoutes);
    for (const path of ["ssh/verify", "ssh/public_key", "ssh/config/ca", "ssh/lookup", "ssh/roles", "ssh/roles/", "ssh/roles/web", "ssh/config/zeroaddress"]) {
      const rest = path.slice("ssh/".length);
      const scanned = vaultRoutes.find((r) => r.mounted && new RegExp(`^${r.pattern.replace(/:[a-z_]+/g, "[^/]+")}/?$`).test(rest));
      expect(router.match(path, ["ssh"])?.route, path).toBe(scanned);
    }
  });
});
