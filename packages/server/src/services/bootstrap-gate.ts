import type { Queryable } from '../db/database.ts';
import { isBootstrapped } from './bootstrap.ts';

/**
 * isBootstrapped, remembered once true: an instance never goes back to "not
 * set up", so sign-ins after the first check cost no query. Until then every
 * sign-in asks the database again (another replica may have bootstrapped).
 */
export class BootstrapGate {
  readonly #db: Queryable;
  #known = false;

  constructor(deps: { db: Queryable }) {
    this.#db = deps.db;
  }

  async isBootstrapped(): Promise<boolean> {
    if (!this.#known) this.#known = await isBootstrapped(this.#db);
    return this.#known;
  }
}
