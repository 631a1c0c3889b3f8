/**
 * Runs deploy/argocd/terdutserver-health.lua, the health check the README
 * gives Argo CD, on a TerdutServer object. Argo CD runs it with gopher-lua
 * (Lua 5.1); here it runs on wasmoon (PUC Lua 5.4 in WebAssembly), a
 * stand-in: the script keeps to what both read the same (no integer
 * division, goto or bit operators).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LuaFactory } from 'wasmoon';
import { repoRoot } from '../../peers/child-processes.ts';

export const HEALTH_SCRIPT_PATH = join(repoRoot, 'deploy', 'argocd', 'terdutserver-health.lua');

export interface ArgoHealth {
  status: 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';
  message: string;
}

const factory = new LuaFactory();

export async function argoCdHealth(object: object): Promise<ArgoHealth> {
  const lua = await factory.createEngine();
  try {
    // A copy made of JSON, as Argo CD hands the script the object decoded from JSON.
    lua.global.set('obj', JSON.parse(JSON.stringify(object)));
    const result = (await lua.doString(readFileSync(HEALTH_SCRIPT_PATH, 'utf8'))) as ArgoHealth;
    return { status: result.status, message: result.message };
  } finally {
    lua.global.close();
  }
}
