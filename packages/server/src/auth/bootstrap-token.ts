import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';

/** The bootstrap token cannot be obtained (file missing, unreadable, empty). The message names the file, never a token. */
export class BootstrapTokenUnavailable extends Error {}

/** Where the bootstrap token comes from; see bootstrap-protocol.md. */
export interface BootstrapTokenSource {
  readonly origin: 'file' | 'environment' | 'generated';
  /** The file, for origin `file`. */
  readonly path?: string;
  /** The token itself, only when generated at start-up: `main` prints it once. */
  readonly generated?: string;
  /** The token as of now. Throws BootstrapTokenUnavailable when the file cannot be read. */
  current(): Promise<string>;
}

const MINIMUM_LENGTH = 32;

/**
 * Picks the token source from configuration: `TERDUT_BOOTSTRAP_TOKEN_FILE`,
 * else `TERDUT_BOOTSTRAP_TOKEN`, else a token generated now (32 random bytes, hex).
 *
 * @example const token = await bootstrapTokenSource(config).current();
 */
export function bootstrapTokenSource(config: {
  bootstrapTokenFile: string | undefined;
  bootstrapToken: string | undefined;
}): BootstrapTokenSource {
  if (config.bootstrapTokenFile !== undefined) return new FileTokenSource(config.bootstrapTokenFile);
  if (config.bootstrapToken !== undefined) {
    const token = config.bootstrapToken;
    return { origin: 'environment', current: async () => token };
  }
  const generated = randomBytes(32).toString('hex');
  return { origin: 'generated', generated, current: async () => generated };
}

/**
 * A token in a file, re-read whenever the file changes so a rotated Secret
 * takes effect without a restart. Kubernetes updates a mounted Secret by
 * swapping a symlink to a new directory, so `stat` (which follows links) sees
 * a new inode; an in-place rewrite shows up as a new size or mtime. One stat
 * per use is cheap next to the rate-limited requests that need the token.
 */
class FileTokenSource implements BootstrapTokenSource {
  readonly origin = 'file' as const;
  readonly path: string;
  #cached: { signature: string; token: string } | undefined;

  constructor(path: string) {
    this.path = path;
  }

  async current(): Promise<string> {
    let signature: string;
    try {
      const info = await stat(this.path);
      signature = `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    } catch (error) {
      throw this.#unavailable(error);
    }
    if (this.#cached?.signature === signature) return this.#cached.token;
    let token: string;
    try {
      token = (await readFile(this.path, 'utf8')).trim();
    } catch (error) {
      throw this.#unavailable(error);
    }
    if (token.length < MINIMUM_LENGTH) {
      throw new BootstrapTokenUnavailable(
        `the bootstrap token in ${this.path} (TERDUT_BOOTSTRAP_TOKEN_FILE) is ${token.length === 0 ? 'empty' : 'too short'}; ` +
          `it needs at least ${MINIMUM_LENGTH} characters of randomness (e.g. openssl rand -hex 32)`,
      );
    }
    this.#cached = { signature, token };
    return token;
  }

  #unavailable(error: unknown): BootstrapTokenUnavailable {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return new BootstrapTokenUnavailable(
      `the bootstrap token file ${this.path} cannot be read (${code}); check TERDUT_BOOTSTRAP_TOKEN_FILE and the mounted Secret`,
    );
  }
}
