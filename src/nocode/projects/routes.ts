/**
 * Projects (N9, N10, reference §5.3): `POST|GET /organizations/:org/projects` and
 * `GET /projects/:id`. Creating needs `manage-projects` (owners and the organization
 * token have it); any member reads.
 */
import { Hono } from "hono";
import { createDb } from "../../db/client";
import { projects } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { FieldErrors, pageDocument, pageRequest, readResource } from "../jsonapi";
import { defaultProjectId } from "../organizations/repo";
import { orgCallerPermissions } from "../permissions";
import { jsonApi } from "../respond";
import { findProject, listProjects, type ProjectRow } from "./repo";
import { serializeProject } from "./serialize";
import { rights } from "../route-rights";

/** Reference §5.3: 3–40 characters of letters, digits, spaces, `-`, `_`; no leading or trailing space. */
export const PROJECT_NAME = /^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/;
export const PROJECT_NAME_MIN = 3;
export const PROJECT_NAME_MAX = 40;
export const PROJECT_DESCRIPTION_MAX = 256;

export const projectRoutes = new Hono<NocodeEnv>();

projectRoutes.post("/organizations/:org/projects", rights({ right: "manage-projects" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  const rights = await orgCallerPermissions(db, c.var.caller, organization);
  if (!rights.has("manage-projects")) throw notFound();
  const input = await readResource(c.req.raw, ["projects", "project"]);
  const errors = new FieldErrors();
  const name = errors.required(input.attributes, "name");
  if (name !== undefined) {
    if (name.length < PROJECT_NAME_MIN) errors.add("name", `Name is too short (minimum is ${PROJECT_NAME_MIN} characters)`);
    else if (name.length > PROJECT_NAME_MAX) errors.add("name", `Name is too long (maximum is ${PROJECT_NAME_MAX} characters)`);
    if (!PROJECT_NAME.test(name)) {
      errors.add("name", "Name may only contain letters, numbers, spaces, dashes (-), and underscores (_), and may not begin or end with a space");
    }
  }
  const description = errors.string(input.attributes, "description", { nullable: true });
  if (typeof description === "string" && description.length > PROJECT_DESCRIPTION_MAX) {
    errors.add("description", `Description is too long (maximum is ${PROJECT_DESCRIPTION_MAX} characters)`);
  }
  errors.throwIfAny();

  const project: ProjectRow = { id: newId("prj"), organization, name: name!, description: description || null, createdAt: Date.now() };
  try {
    await db.insert(projects).values(project);
  } catch (err) {
    if (isUniqueViolation(err)) throw invalidAttribute("name", "Name has already been taken");
    throw err;
  }
  return jsonApi({ data: serializeProject(project, rights, false) }, 201);
});

projectRoutes.get("/organizations/:org/projects", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  const rights = await orgCallerPermissions(db, c.var.caller, organization);
  if (!rights.has("member")) throw notFound();
  const url = new URL(c.req.url);
  const page = pageRequest(url);
  const q = url.searchParams.get("q") ?? undefined;
  const [{ rows, total }, defaultId] = await Promise.all([listProjects(db, organization, page, q), defaultProjectId(db, organization)]);
  return jsonApi({ data: rows.map((p) => serializeProject(p, rights, p.id === defaultId)), ...pageDocument(url, page, total) });
});

projectRoutes.get("/projects/:id", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const project = await findProject(db, c.req.param("id"));
  if (!project) throw notFound();
  const rights = await orgCallerPermissions(db, c.var.caller, project.organization);
  if (!rights.has("member")) throw notFound();
  const defaultId = await defaultProjectId(db, project.organization);
  return jsonApi({ data: serializeProject(project, rights, project.id === defaultId) });
});
