/**
 * Projects (N9, N10, HCP Terraform's projects API): `POST|GET /organizations/:org/projects` and
 * `GET /projects/:id`. Creating needs `manage-projects` (owners and the organization
 * token have it); any member reads.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { invalidAttribute } from "../errors";
import { newId } from "../ids";
import { defaultProjectId } from "../organizations/repo";
import { pagedList, single } from "../request/answers";
import { nullableText, requiredText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageParameters } from "../request/query";
import { jsonApi, jsonApiPage } from "../respond";
import { rights, scope } from "../route-rights";
import { findProject, insertProject, listProjects, type ProjectRow } from "./repo";
import { projectAnswer, serializeProject } from "./serialize";

/** HCP Terraform's projects API: 3–40 characters of letters, digits, spaces, `-`, `_`; no leading or trailing space. */
export const PROJECT_NAME = /^[A-Za-z0-9_-]([A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/;
export const PROJECT_NAME_MIN = 3;
export const PROJECT_NAME_MAX = 40;
export const PROJECT_DESCRIPTION_MAX = 256;

export const projectRoutes = new Hono<NocodeEnv>();

const projectCreate = operation({
  tag: "projects",
  summary: "Create a project (manage-projects: N10)",
  body: resourceDocument({
    types: ["projects", "project"],
    attributes: {
      name: v.pipe(
        requiredText("name"),
        v.minLength(PROJECT_NAME_MIN, `Name is too short (minimum is ${PROJECT_NAME_MIN} characters)`),
        v.maxLength(PROJECT_NAME_MAX, `Name is too long (maximum is ${PROJECT_NAME_MAX} characters)`),
        v.regex(
          PROJECT_NAME,
          "Name may only contain letters, numbers, spaces, dashes (-), and underscores (_), and may not begin or end with a space",
        ),
      ),
      description: v.pipe(
        nullableText("description"),
        v.check(
          (d) => typeof d !== "string" || d.length <= PROJECT_DESCRIPTION_MAX,
          `Description is too long (maximum is ${PROJECT_DESCRIPTION_MAX} characters)`,
        ),
      ),
    },
  }),
  answers: { 201: { description: "The project", schema: single(projectAnswer) } },
});

projectRoutes.post("/organizations/:org/projects", rights({ right: "manage-projects" }), projectCreate, async (c) => {
  const db = c.var.db;
  const organization = c.req.param("org");
  const rights = c.var.orgRights;
  const { name, description } = (await projectCreate.body(c)).data.attributes;

  const project: ProjectRow = {
    id: newId("prj"),
    organization,
    name,
    description: description || null,
    createdAt: Date.now(),
  };
  await insertUnique(insertProject(db, project), () => invalidAttribute("name", "Name has already been taken"));
  return jsonApi({ data: serializeProject(project, rights, false) }, 201);
});

const projectList = operation({
  tag: "projects",
  summary: "List an organization's projects (members)",
  query: v.looseObject({ ...pageParameters, q: v.optional(v.string()) }),
  answers: { 200: { description: "One page of projects", schema: pagedList(projectAnswer) } },
});

projectRoutes.get("/organizations/:org/projects", rights({ right: "member" }), projectList, async (c) => {
  const db = c.var.db;
  const organization = c.req.param("org");
  const rights = c.var.orgRights;
  const query = projectList.query(c);
  const page = pageOf(query);
  const q = query.q;
  const [listed, defaultId] = await Promise.all([
    listProjects(db, organization, page, q),
    defaultProjectId(db, organization),
  ]);
  return jsonApiPage(c.req.url, page, listed, (p) => serializeProject(p, rights, p.id === defaultId));
});

const projectShow = operation({
  tag: "projects",
  summary: "Show a project (members)",
  answers: { 200: { description: "The project", schema: single(projectAnswer) } },
});

/** The project `:id`. */
const projectById = scope(async (c) => {
  const project = await findProject(c.var.db, c.req.param("id") ?? "");
  return project && { resource: project, organization: project.organization };
});

projectRoutes.get("/projects/:id", rights({ right: "member" }, { scope: projectById }), projectShow, async (c) => {
  const db = c.var.db;
  const project = projectById.of(c);
  const rights = c.var.orgRights;
  const defaultId = await defaultProjectId(db, project.organization);
  return jsonApi({ data: serializeProject(project, rights, project.id === defaultId) });
});
