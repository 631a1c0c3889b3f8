/**
 * The operator-wide logger: one JSON object per line on stderr, what a log
 * collector in the cluster expects. `withFields` binds fields (the resource a
 * reconcile pass works on) to every line.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A logger that adds `bound` to every line (a line's own fields win). */
export function withFields(logger: Logger, bound: Record<string, unknown>): Logger {
  const at =
    (level: keyof Logger) =>
    (message: string, fields?: Record<string, unknown>): void =>
      logger[level](message, { ...bound, ...fields });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

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
