/** Where "now" comes from, so tests can move time (snooze expiry, staleness, sessions). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
