/**
 * Failpoints for crash tests: with TERDUT_OPERATOR_FAILPOINT=<step> the
 * process exits (code 86, no cleanup, like a SIGKILL) right after that step's
 * API call succeeded. Inert unless the variable is set.
 */
export const failpointExitCode = 86;

export type Failpoint = (step: string) => void;

export function failpointFromEnv(env: NodeJS.ProcessEnv = process.env): Failpoint {
  const armed = new Set((env.TERDUT_OPERATOR_FAILPOINT ?? '').split(',').filter(Boolean));
  if (armed.size === 0) return () => {};
  return (step) => {
    if (!armed.has(step)) return;
    process.stderr.write(`terdut-operator: failpoint ${step} reached; exiting\n`);
    process.exit(failpointExitCode);
  };
}
