import type { FastifyInstance, FastifyReply } from 'fastify';

/**
 * Headers every answer carries, errors and 404s included: no MIME sniffing
 * (a JSON body never runs as a script), no Referer leaking incident URLs to
 * other sites, and no framing by another site (clickjacking). The web app may
 * set a fuller Content-Security-Policy of its own; it is kept when present.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    setSecurityHeaders(reply);
    return payload;
  });
}

/** Sets the headers on one answer (also those Fastify gives before any hook runs, such as a path it cannot decode). */
export function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
  if (!reply.hasHeader('content-security-policy')) {
    reply.header('content-security-policy', "frame-ancestors 'none'");
  }
}
