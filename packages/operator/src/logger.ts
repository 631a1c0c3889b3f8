/** One JSON object per line on stderr: what a log collector in the cluster expects. */
import type { Logger } from './controllers/terdutserver/context.ts';

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;

export function jsonLogger(
  level: keyof typeof levels,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const min = levels[level];
  const log = (at: keyof typeof levels) => (message: string, fields?: Record<string, unknown>) => {
    if (levels[at] < min) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...fields })}\n`);
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}
