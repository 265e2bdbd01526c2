/**
 * Identity templates in ACL mode (Vault's ACL templating): rendering, error texts and the
 * syntax check used when a role is written.
 */
import { describe, expect, it } from "vitest";
import {
  containsTemplate,
  renderFailure,
  renderTemplate,
  type TemplateEntity,
  templateSyntaxError,
} from "../../../../src/ssh/identity/templates";

const entity: TemplateEntity = {
  id: "0b4c-entity",
  name: "alice-entity",
  metadata: { ssh_username: "alice", empty: "", multi: "a,b" },
  aliases: [{ id: "alias-1", name: "alice", mountAccessor: "auth_token_1234abcd", metadata: { team: "ops" } }],
};

describe("containsTemplate (Vault's {{.+?}})", () => {
  it.each([
    ["{{identity.entity.name}}", true],
    ["ssh-{{ x }}-y", true],
    ["{{}}", false],
    ["plain", false],
    ["{{ unclosed", false],
  ])("%j → %s", (text, expected) => {
    expect(containsTemplate(text)).toBe(expected);
  });
});

describe("renderTemplate", () => {
  it.each([
    ["{{identity.entity.id}}", "0b4c-entity"],
    ["{{identity.entity.name}}", "alice-entity"],
    ["{{ identity.entity.metadata.ssh_username }}", "alice"],
    ["ssh-{{identity.entity.metadata.ssh_username}}.example.com", "ssh-alice.example.com"],
    ["{{identity.entity.metadata.multi}}", "a,b"],
    ["{{identity.entity.aliases.auth_token_1234abcd.name}}", "alice"],
    ["{{identity.entity.aliases.auth_token_1234abcd.id}}", "alias-1"],
    ["{{identity.entity.aliases.auth_token_1234abcd.metadata.team}}", "ops"],
    ["{{identity.entity.aliases.auth_token_1234abcd.custom_metadata.team}}", "ops"],
    ["{{identity.entity.name}}, {{identity.entity.name}}_x", "alice-entity, alice-entity_x"],
    ["no directive", "no directive"],
  ])("%s → %s", (template, expected) => {
    expect(renderTemplate(template, entity)).toBe(expected);
  });

  it("renders time.now and its offsets in Unix seconds", () => {
    const now = Date.UTC(2030, 0, 1);
    expect(renderTemplate("{{time.now}}", null, now)).toBe(String(now / 1000));
    expect(renderTemplate("{{time.now.plus.1h}}", null, now)).toBe(String(now / 1000 + 3600));
    expect(renderTemplate("{{time.now.minus.90}}", null, now)).toBe(String(now / 1000 - 90));
  });

  it.each([
    ["{{identity.entity.metadata.missing}}", "no value could be found for one of the template directives"],
    ["{{identity.entity.metadata.empty}}", "no value could be found for one of the template directives"],
    ["{{identity.entity.metadata}}", "no value could be found for one of the template directives"],
    ["{{identity.entity.groups.names}}", "no value could be found for one of the template directives"],
    ["{{identity.entity.aliases.auth_other.name}}", "alias not found"],
    ["{{identity.entity.aliases.x}}", "invalid alias selector"],
    ["{{identity.groups.names.g.id}}", "string contains groups template directives but no groups were found"],
    ["{{nope}}", "no value could be found for one of the template directives"],
    ["{{identity.entity.name", "unbalanced templating characters"],
    ["}}{{identity.entity.name}}{{", "unbalanced templating characters"],
    ["{{a}}}}{{b", "unbalanced templating characters"],
    ["{{time.later}}", 'invalid time selector "later"'],
    ["{{time.now.plus}}", "missing time operand"],
    ["{{time.now.times.1h}}", 'invalid time operator "times"'],
    ["{{time.now.plus.soon}}", 'invalid duration: time: invalid duration "soon"'],
  ])("%s fails with %s", (template, message) => {
    expect(() => renderTemplate(template, entity)).toThrow(message);
  });

  it("renders the entity's groups by name and by id (S27; Vault's performGroupsTemplating)", () => {
    const grouped: TemplateEntity = {
      ...entity,
      groups: [
        { id: "g-1", name: "admins", metadata: { unix: "wheel", empty: "" } },
        { id: "g-2", name: "ops", metadata: {} },
      ],
    };
    expect(renderTemplate("{{identity.groups.names.admins.id}}", grouped)).toBe("g-1");
    expect(renderTemplate("{{ identity.groups.ids.g-2.name }}", grouped)).toBe("ops");
    expect(renderTemplate("u-{{identity.groups.names.admins.metadata.unix}}", grouped)).toBe("u-wheel");
    // Vault returns a group's metadata value as stored, empty included.
    expect(renderTemplate("[{{identity.groups.names.admins.metadata.empty}}]", grouped)).toBe("[]");
    for (const [template, message] of [
      ["{{identity.groups.names.devs.id}}", 'entity is not a member of group "devs"'],
      ["{{identity.groups.ids.admins.id}}", 'entity is not a member of group "admins"'],
      ["{{identity.groups.names.ops.metadata.unix}}", "no value could be found for one of the template directives"],
      ["{{identity.groups.names.ops.policies}}", "no value could be found for one of the template directives"],
      ["{{identity.groups.names.ops}}", "invalid groups accessor"],
      ["{{identity.groups.labels.ops.id}}", "invalid groups selector"],
      ["{{identity.groups.names}}", "invalid groups selector"],
    ]) {
      expect(() => renderTemplate(template!, grouped), template).toThrow(message!);
    }
    expect(() => renderTemplate("{{identity.groups.names.admins.id}}", { ...entity, groups: [] })).toThrow(
      "string contains groups template directives but no groups were found",
    );
  });

  it("entity directives need an entity", () => {
    expect(() => renderTemplate("{{identity.entity.name}}", null)).toThrow(
      "string contains entity template directives but no entity was found",
    );
  });

  it("does not reach inherited properties of metadata", () => {
    expect(() => renderTemplate("{{identity.entity.metadata.constructor}}", entity)).toThrow("no value could be found");
  });

  it("wraps failures in Vault's text", () => {
    expect(renderFailure("{{x}}", "cause")).toBe("template '{{x}}' could not be rendered -> cause");
  });
});

describe("templateSyntaxError (role writes)", () => {
  it.each([
    "{{identity.entity.metadata.ssh_username}}",
    "{{ identity.entity.name }}.example.com",
    "{{identity.entity.aliases.auth_token_1234abcd.metadata.x}}",
    "{{identity.groups.names.admins.metadata.x}}",
    "{{time.now.plus.1h}}",
    "literal",
  ])("accepts %s", (template) => {
    expect(templateSyntaxError(template)).toBeNull();
  });

  it.each([
    ["{{identity.entity.name", "unbalanced templating characters"],
    ["{{identity.nope}}", 'unknown template directive "identity.nope"'],
    ["{{}}", 'unknown template directive ""'],
    ["{{identity.entity.metadata}}", 'unknown template directive "identity.entity.metadata"'],
  ])("refuses %s", (template, cause) => {
    expect(templateSyntaxError(template)).toBe(cause);
  });
});
