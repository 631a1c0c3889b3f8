/**
 * The few podman calls the image smoke tests make. The images are built by
 * .ci/images (buildah) and named through TERDUT_TEST_SERVER_IMAGE and
 * TERDUT_TEST_OPERATOR_IMAGE; without them these tests are skipped, so
 * `npm test` on a machine without podman stays green.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';

const run = promisify(execFile);

export const serverImage = process.env.TERDUT_TEST_SERVER_IMAGE;
export const operatorImage = process.env.TERDUT_TEST_OPERATOR_IMAGE;

/** Runs `podman args…` (bounded); resolves with stdout, rejects with stderr in the message. */
export async function podman(args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run('podman', args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(
      `podman ${args.join(' ')} failed: ${(error as Error).message}\n${stderr ?? ''}${stdout ?? ''}`,
      {
        cause: error,
      },
    );
  }
}

export const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

/** A container's state after it ended (or now). */
export async function containerState(name: string): Promise<{ running: boolean; exitCode: number }> {
  const [running, exitCode] = (
    await podman(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name])
  )
    .trim()
    .split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

/** Removes a container and what it wrote, whatever state it is in. */
export async function removeContainer(name: string): Promise<void> {
  await podman(['rm', '--force', '--volumes', '--time', '5', name]).catch(() => {});
}

export async function logsOf(name: string): Promise<string> {
  try {
    const { stdout, stderr } = await run('podman', ['logs', name], {
      timeout: 10_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (error) {
    return `(podman logs failed: ${(error as Error).message})`;
  }
}
