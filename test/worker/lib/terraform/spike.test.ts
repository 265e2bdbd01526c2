import { expect, it } from "vitest";
import { spike } from "../../../../src/lib/terraform/spike";
it("spike", async () => {
  const s = await spike('variable "x" {\n  type = list(object({a = optional(string, "b")}))\n  default = -1\n}\n');
  console.log(s);
  expect(s).toContain("block");
});
