/**
 * D1 reads and writes of organization single sign-on (decision N16): the configuration
 * (its client secret under KEYWAY_KEK, B2, rewrapped as B11 says), linked provider
 * identities, users made by auto-provision and team-sync's membership changes.
 */
import { and, eq, inArray, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nocodeUsers, ssoConfigurations, ssoIdentities, teamMemberships, teams } from "../../db/schema/nocode";
import { rewrapStoredSecret } from "../../db/secrets-at-rest";
import { decryptSecret, encryptSecret, needsRewrap } from "../../lib/crypto/kek";
import type { DiscoveredProvider } from "../../lib/oidc/discovery";
import { OWNERS_TEAM } from "../access/permissions";
import { newId } from "../ids";

export type SsoConfigurationRow = typeof ssoConfigurations.$inferSelect;

/** The AES-GCM context of an organization's client secret (B2). */
export const clientSecretContext = (organization: string) => `sso-client-secret:${organization}`;

/** The stored configuration of `organization`, or undefined when none was ever written. */
export async function findSsoConfiguration(db: Db, organization: string): Promise<SsoConfigurationRow | undefined> {
  return db.select().from(ssoConfigurations).where(eq(ssoConfigurations.organization, organization)).get();
}

/** The provider endpoints stored with an enabled configuration, or null. */
export function discoveredOf(row: Pick<SsoConfigurationRow, "discovered">): DiscoveredProvider | null {
  if (!row.discovered) return null;
  return JSON.parse(row.discovered) as DiscoveredProvider;
}

/**
 * The decrypted client secret, or null when none is stored. B11: a ciphertext under an
 * older KEYWAY_KEK key is rewrapped after the answer (`waitUntil`).
 */
export async function clientSecretOf(
  env: Pick<Env, "DB" | "KEYWAY_KEK">,
  row: Pick<SsoConfigurationRow, "organization" | "clientSecretEncrypted">,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<string | null> {
  const encrypted = row.clientSecretEncrypted;
  if (!encrypted) return null;
  const secret = await decryptSecret(env.KEYWAY_KEK, clientSecretContext(row.organization), encrypted);
  if (needsRewrap(env.KEYWAY_KEK, encrypted)) {
    waitUntil(rewrapStoredSecret(env, "sso_configurations", row.organization, encrypted));
  }
  return secret;
}

/** Write the whole configuration of an organization (insert or replace). */
export async function saveSsoConfiguration(db: Db, row: SsoConfigurationRow): Promise<void> {
  const { organization: _key, ...rest } = row;
  await db
    .insert(ssoConfigurations)
    .values(row)
    .onConflictDoUpdate({ target: ssoConfigurations.organization, set: rest });
}

/** Encrypt a client secret for storage (B2). */
export function encryptClientSecret(env: Pick<Env, "KEYWAY_KEK">, organization: string, secret: string) {
  return encryptSecret(env.KEYWAY_KEK, clientSecretContext(organization), secret);
}

/** The team named `name` in `organization`, or undefined. */
export async function findTeamByName(db: Db, organization: string, name: string) {
  return db
    .select({ id: teams.id, name: teams.name })
    .from(teams)
    .where(and(eq(teams.organization, organization), eq(teams.name, name)))
    .get();
}

/** The user linked to (issuer, subject) in `organization`, with its username, or undefined. */
export async function linkedUser(db: Db, organization: string, issuer: string, subject: string) {
  return db
    .select({ id: nocodeUsers.id, username: nocodeUsers.username })
    .from(ssoIdentities)
    .innerJoin(nocodeUsers, eq(nocodeUsers.id, ssoIdentities.userId))
    .where(
      and(
        eq(ssoIdentities.organization, organization),
        eq(ssoIdentities.issuer, issuer),
        eq(ssoIdentities.subject, subject),
      ),
    )
    .get();
}

/** Users whose email is `email`, compared case-insensitively (at most two: enough to tell "exactly one"). */
export async function usersWithEmail(db: Db, email: string) {
  return db
    .select({ id: nocodeUsers.id, username: nocodeUsers.username })
    .from(nocodeUsers)
    .where(sql`lower(${nocodeUsers.email}) = lower(${email})`)
    .limit(2)
    .all();
}

/** Whether `userId` is in a team of `organization`. */
export async function isMember(db: Db, organization: string, userId: string): Promise<boolean> {
  const row = await db
    .select({ one: sql<number>`1` })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(and(eq(teamMemberships.userId, userId), eq(teams.organization, organization)))
    .limit(1)
    .get();
  return row !== undefined;
}

/** Link (issuer, subject) to `userId` in `organization` (a repeated link keeps the first). */
export async function linkIdentity(db: Db, organization: string, issuer: string, subject: string, userId: string) {
  await db
    .insert(ssoIdentities)
    .values({ organization, issuer, subject, userId, createdAt: Date.now() })
    .onConflictDoNothing()
    .run();
}

/**
 * A username for a provisioned user: the email's local part reduced to `[A-Za-z0-9_-]`
 * (at most 56 characters; `user` when nothing is left), made unique with a numeric suffix.
 */
export async function freeUsername(db: Db, email: string): Promise<string> {
  const local =
    email
      .slice(0, email.lastIndexOf("@"))
      .replace(/[^A-Za-z0-9_-]/g, "")
      .slice(0, 56) || "user";
  const taken = new Set(
    (
      await db
        .select({ username: nocodeUsers.username })
        .from(nocodeUsers)
        .where(sql`${nocodeUsers.username} = ${local} OR ${nocodeUsers.username} GLOB ${`${local}[0-9]*`}`)
        .all()
    ).map((r) => r.username.toLowerCase()),
  );
  if (!taken.has(local.toLowerCase())) return local;
  for (let n = 2; ; n++) if (!taken.has(`${local}${n}`.toLowerCase())) return `${local}${n}`;
}

/** Create a user in `teamId` and link its identity, in one batch. */
export async function provisionUser(
  db: Db,
  input: { organization: string; issuer: string; subject: string; username: string; email: string; teamId: string },
): Promise<{ id: string; username: string }> {
  const id = newId("user");
  const now = Date.now();
  await db.batch([
    db.insert(nocodeUsers).values({ id, username: input.username, email: input.email, createdAt: now }),
    db.insert(teamMemberships).values({ teamId: input.teamId, userId: id, createdAt: now }),
    db.insert(ssoIdentities).values({
      organization: input.organization,
      issuer: input.issuer,
      subject: input.subject,
      userId: id,
      createdAt: now,
    }),
  ]);
  return { id, username: input.username };
}

/**
 * Team-sync (N16): make the user a member of exactly the teams of `organization` whose
 * names are in `groups`, leaving `owners` as it is. Returns whether anything changed.
 */
export async function syncTeams(db: Db, organization: string, userId: string, groups: readonly string[]) {
  const orgTeams = await db
    .select({ id: teams.id, name: teams.name, member: sql<number | null>`${teamMemberships.userId} IS NOT NULL` })
    .from(teams)
    .leftJoin(teamMemberships, and(eq(teamMemberships.teamId, teams.id), eq(teamMemberships.userId, userId)))
    .where(and(eq(teams.organization, organization), ne(teams.name, OWNERS_TEAM)))
    .all();
  const wanted = new Set(groups);
  const add = orgTeams.filter((t) => wanted.has(t.name) && !t.member).map((t) => t.id);
  const remove = orgTeams.filter((t) => !wanted.has(t.name) && t.member).map((t) => t.id);
  const now = Date.now();
  const statements = [
    ...add.map((teamId) => db.insert(teamMemberships).values({ teamId, userId, createdAt: now }).onConflictDoNothing()),
    ...(remove.length > 0
      ? [
          db
            .delete(teamMemberships)
            .where(and(eq(teamMemberships.userId, userId), inArray(teamMemberships.teamId, remove))),
        ]
      : []),
  ];
  if (statements.length === 0) return false;
  await db.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
  return true;
}

/**
 * What an SSO session needs re-checked on every request (N16): the user, whether it is in
 * a team of the organization, and the organization's SSO state. One D1 statement.
 */
export async function ssoSessionFacts(db: Db, userId: string, organization: string) {
  return db
    .select({
      username: nocodeUsers.username,
      enabled: ssoConfigurations.enabled,
      generation: ssoConfigurations.generation,
      member: sql<number>`EXISTS (SELECT 1 FROM ${teamMemberships} JOIN ${teams} ON ${teams.id} = ${teamMemberships.teamId} WHERE ${teamMemberships.userId} = ${userId} AND ${teams.organization} = ${organization})`,
    })
    .from(nocodeUsers)
    .leftJoin(ssoConfigurations, eq(ssoConfigurations.organization, organization))
    .where(eq(nocodeUsers.id, userId))
    .get();
}
