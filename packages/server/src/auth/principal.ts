import { forbidden } from '../errors.ts';

/** Who is calling: resolved from an API key or a browser session on every authenticated request. */
export interface Principal {
  userId: number;
  username: string;
  role: 'admin' | 'member';
  /** 'service' for service accounts; those of scope `instance` act as admins. */
  kind: 'person' | 'service';
  via: 'api_key' | 'session';
  apiKeyId?: number;
  sessionId?: string;
}

/** Throws 403 unless the caller is an admin (instance service accounts are admins). */
export function requireAdmin(principal: Principal, action: string): void {
  if (principal.role !== 'admin') throw forbidden(`only admins may ${action}`);
}

/** Throws 403 unless the caller is `userId` or an admin. */
export function requireSelfOrAdmin(principal: Principal, userId: number, action: string): void {
  if (principal.userId !== userId && principal.role !== 'admin') {
    throw forbidden(`only admins may ${action} for another user`);
  }
}
