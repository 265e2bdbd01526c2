/**
 * The OTP race check of the fuzz suite (decision S13): OTPs issued through
 * `creds`, each verified by several callers at once; exactly one may succeed.
 *
 * B19: the race runs on state the fuzzer cannot reach. The fuzzed requests carry the root
 * token and may delete or change anything they can name on the mount `ssh` (a role named
 * `otp-role` was gone after a full run), so the race uses its own mount (RACE_MOUNT, which
 * the generators never name) and creates its OTP role there with a fresh name after the
 * fuzz, in {@link runOtpRaces}.
 */
import { vaultOk } from "../../support/client";
import type { FuzzFixtures } from "./fixtures";
import { isDevProxyFailure } from "./harness";

/** The mount only the OTP race uses (configured in SSH_MOUNTS by fuzz.test.ts; see the note above). */
export const RACE_MOUNT = "otp-race";

/** Create the race's OTP role on its own mount; returns its name. */
async function createRaceRole(f: FuzzFixtures): Promise<string> {
  const role = `race-${crypto.randomUUID().slice(0, 8)}`;
  await vaultOk(f, "POST", `${RACE_MOUNT}/roles/${role}`, {
    key_type: "otp",
    default_user: "ubuntu",
    cidr_list: "10.0.0.0/8",
  });
  return role;
}

export interface OtpRaceStats {
  otps: number;
  attempts: number;
  wonTwice: number;
  /** OTPs no caller won although every attempt was answered by the Worker. */
  neverWon: number;
  /**
   * Attempts lost in transport — answered by the dev proxy itself (isDevProxyFailure) or a
   * kept-alive connection the local server closed — whose outcome is unknown.
   */
  proxyFailures: number;
  /** OTPs nobody was seen to win because some attempt was lost in the dev proxy. */
  indeterminate: number;
  otherAnswers: number;
}

/**
 * Issue `otps` OTPs, then have `callers` concurrent callers verify each (all callers of one
 * OTP at once, `concurrency` OTPs in flight): exactly one may succeed (S13).
 */
export async function runOtpRaces(
  f: FuzzFixtures,
  options: { otps: number; callers: number; concurrency: number },
): Promise<OtpRaceStats> {
  const stats: OtpRaceStats = {
    otps: 0,
    attempts: 0,
    wonTwice: 0,
    neverWon: 0,
    proxyFailures: 0,
    indeterminate: 0,
    otherAnswers: 0,
  };
  const role = await createRaceRole(f);
  let issued = 0;
  const worker = async () => {
    while (issued < options.otps) {
      issued++;
      let creds: Response;
      try {
        creds = await fetch(`${f.url}/v1/${RACE_MOUNT}/creds/${role}`, {
          method: "POST",
          headers: { "X-Vault-Token": f.rootToken, "Content-Type": "application/json" },
          body: JSON.stringify({ ip: "10.1.2.3" }),
        });
      } catch {
        stats.proxyFailures++;
        issued--;
        continue;
      }
      if (creds.status !== 200) {
        const text = await creds.text();
        if (isDevProxyFailure(creds.status, creds.headers, text)) {
          stats.proxyFailures++;
          issued--;
          continue;
        }
        throw new Error(`creds answered ${creds.status}: ${text}`);
      }
      const otp = ((await creds.json()) as { data: { key: string } }).data.key;
      stats.otps++;
      const answers = await Promise.all(
        Array.from({ length: options.callers }, async () => {
          try {
            const res = await fetch(`${f.url}/v1/${RACE_MOUNT}/verify`, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ otp }),
            });
            const text = await res.text();
            return { status: res.status, text, proxy: isDevProxyFailure(res.status, res.headers, text) };
          } catch (err) {
            // The local server closed a kept-alive connection as it was reused ("other side
            // closed"): the attempt's outcome is unknown, like one lost in the dev proxy.
            return { status: 0, text: String(err), proxy: true };
          }
        }),
      );
      stats.attempts += answers.length;
      const proxied = answers.filter((a) => a.proxy).length;
      stats.proxyFailures += proxied;
      const wins = answers.filter((a) => a.status === 200).length;
      if (wins > 1) stats.wonTwice++;
      if (wins === 0 && proxied === 0) stats.neverWon++;
      if (wins === 0 && proxied > 0) stats.indeterminate++;
      stats.otherAnswers += answers.filter(
        (a) => !a.proxy && a.status !== 200 && !(a.status === 400 && a.text.includes("OTP not found")),
      ).length;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return stats;
}
