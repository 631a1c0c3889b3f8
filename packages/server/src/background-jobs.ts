import type { Logger } from 'pino';

/** Periodic work a replica does besides answering requests. */
export interface BackgroundJob {
  name: string;
  intervalMs: number;
  /** One pass; must be safe to run on several replicas at once (claim work in the database). */
  run(): Promise<unknown>;
}

export interface RunningJobs {
  /** Stops scheduling and waits for passes in flight, so the database can close after. */
  stop(): Promise<void>;
}

/**
 * Runs each job every `intervalMs` (the next pass is scheduled after the
 * previous one ended, so passes never overlap). A failed pass is logged and
 * retried at the next interval.
 */
export function startBackgroundJobs(
  jobs: BackgroundJob[],
  logger: Pick<Logger, 'error' | 'debug'>,
): RunningJobs {
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  const schedule = (job: BackgroundJob) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      const pass = job
        .run()
        .then(
          (result) => logger.debug({ job: job.name, result }, 'background job pass done'),
          (error: unknown) =>
            logger.error({ job: job.name, err: error }, 'background job pass failed; retrying later'),
        )
        .finally(() => {
          inFlight.delete(pass);
          schedule(job);
        });
      inFlight.add(pass);
    }, job.intervalMs);
    // Never keep the process alive just for background work.
    timer.unref();
    timers.add(timer);
  };
  for (const job of jobs) schedule(job);
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...inFlight]);
    },
  };
}
