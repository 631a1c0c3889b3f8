/**
 * The load of the intake benchmarks: the four scenarios, the Alertmanager
 * notifications each sends, and the concurrent senders that post them and
 * record latency. `bench/intake.ts` (terdut on PGlite and PostgreSQL) and
 * `bench/intake-alerta.ts` (terdut beside Alerta) both drive their servers
 * through here, so every server gets the same notifications at the same
 * concurrency with the same warm-ups.
 *
 * Environment: BENCH_SECONDS (per scenario, default 6), BENCH_CONCURRENCY
 * (concurrent senders, default 4).
 */
import { notificationOfSize, type WebhookPayloadJson } from '../../test/support/alertmanager-payloads.ts';
import { LatencyRecorder, formatMs } from './latency.ts';
import { JsonHttp } from './json-http.ts';

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
export const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
/** The start of each scenario that is not recorded. */
export const WARM_UP_MS = 1000;
/** Load sent to a fresh server before the first scenario. */
export const SERVER_WARM_UP_MS = 4000;

export interface Scenario {
  label: string;
  alertsPerNotification: number;
  /** `new`: every notification is a new group of new firing alerts (opens an incident, inserts every alert).
   *  `repeat`: the same groups re-sent unchanged (Alertmanager's repeat_interval): only "last seen" moves. */
  kind: 'new' | 'repeat';
}

export const SCENARIOS: Scenario[] = [
  { label: '1 new alert', alertsPerNotification: 1, kind: 'new' },
  { label: '10 new alerts', alertsPerNotification: 10, kind: 'new' },
  { label: '100 new alerts', alertsPerNotification: 100, kind: 'new' },
  { label: '1 alert, repeat', alertsPerNotification: 1, kind: 'repeat' },
  { label: '100 alerts, repeat', alertsPerNotification: 100, kind: 'repeat' },
];

export interface Measured {
  alertsPerSecond: number;
  notificationsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Posts one notification to the server under test; resolves only on its 2xx, throws otherwise. */
export type SendNotification = (notification: WebhookPayloadJson) => Promise<void>;

/** Runs `send` from CONCURRENCY workers until the deadline; the first WARM_UP_MS are not recorded. */
export async function drive(send: (worker: number, sequence: number) => Promise<number>): Promise<Measured> {
  const latency = new LatencyRecorder();
  let alerts = 0;
  let failures = 0;
  let sequence = 0;
  const warmUntil = performance.now() + WARM_UP_MS;
  const deadline = warmUntil + SECONDS * 1000;
  let measuredFrom = Number.NaN;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          const sent = await send(worker, sequence++);
          if (started >= warmUntil) {
            if (Number.isNaN(measuredFrom)) measuredFrom = started;
            latency.record(performance.now() - started);
            alerts += sent;
          }
        } catch (error) {
          failures++;
          if (failures === 1) console.error(`  first failure: ${(error as Error).message}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - (Number.isNaN(measuredFrom) ? warmUntil : measuredFrom)) / 1000;
  return {
    alertsPerSecond: alerts / elapsed,
    notificationsPerSecond: latency.count / elapsed,
    p50: latency.percentile(50),
    p99: latency.percentile(99),
    failures,
  };
}

/**
 * Warms a fresh server for SERVER_WARM_UP_MS with 10-alert notifications of
 * new groups (JIT, PGlite's WASM, cold caches: none of that is what a
 * running server does). Answers how many distinct alerts it accepted.
 */
export async function warmUpServer(send: SendNotification): Promise<number> {
  const warmUntil = performance.now() + SERVER_WARM_UP_MS;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let sequence = 0; performance.now() < warmUntil; sequence++) {
        const alertName = `Warm${worker}n${sequence}`;
        await send(notificationOfSize(10, { name: alertName, groupKey: alertName }));
        accepted += 10;
      }
    }),
  );
  return accepted;
}

/**
 * One scenario against one server. Answers the figures and how many distinct
 * alerts the server accepted meanwhile (warm-up included; a repeat adds none),
 * which a caller can compare with the rows the server stored.
 */
export async function runScenario(
  scenario: Scenario,
  send: SendNotification,
): Promise<{ measured: Measured; distinctAlerts: number }> {
  const size = scenario.alertsPerNotification;
  let distinctAlerts = 0;
  if (scenario.kind === 'new') {
    const measured = await drive(async (worker, sequence) => {
      // A new alert name per notification gives new fingerprints and a new group.
      const alertName = `Bench${size}x${worker}n${sequence}`;
      await send(notificationOfSize(size, { name: alertName, groupKey: `{}:{alertname="${alertName}"}` }));
      distinctAlerts += size;
      return size;
    });
    return { measured, distinctAlerts };
  }
  const groups = Array.from({ length: CONCURRENCY * 4 }, (_, index) =>
    notificationOfSize(size, {
      name: `BenchRepeat${size}x${index}`,
      groupKey: `{}:{alertname="BenchRepeat${size}x${index}"}`,
    }),
  );
  for (const group of groups) {
    await send(group);
    distinctAlerts += size;
  }
  const measured = await drive(async (_worker, sequence) => {
    await send(groups[sequence % groups.length]!);
    return size;
  });
  return { measured, distinctAlerts };
}

/** `  name, 1 new alert: 190 alerts/s, p50 …, p99 …`, the line printed after each scenario. */
export function describeMeasured(name: string, scenario: Scenario, measured: Measured): string {
  return (
    `  ${name}, ${scenario.label}: ${measured.alertsPerSecond.toFixed(0)} alerts/s, p50 ${formatMs(measured.p50)}, p99 ${formatMs(measured.p99)}` +
    (measured.failures ? `, ${measured.failures} FAILED` : '')
  );
}

/** A sender of Alertmanager notifications to terdut-server's webhook; resolves on its 200 (after commit). */
export function terdutSender(baseUrl: string, apiKey: string): SendNotification {
  const poster = new JsonHttp(`${baseUrl}/api/webhook/alertmanager`, { authorization: `Bearer ${apiKey}` });
  return async (notification) => {
    await poster.postExpecting(notification, [200]);
  };
}
