/**
 * Email over SMTP (nodemailer, behind this adapter). A page has a text and
 * an HTML part, a link to the incident and an acknowledge link that opens a
 * CONFIRMATION page (routes/paging/confirm.ts): mail scanners fetch links,
 * so the link itself must never change anything.
 */
import type { Transporter } from 'nodemailer';
import type { SmtpConfig } from './config.ts';
import { DeliveryError, type PageMessage, type ProviderAnswer } from './providers.ts';

export interface EmailSender {
  send(to: string, message: PageMessage, deliveryId: string): Promise<ProviderAnswer>;
}

const SMTP_TIMEOUT_MS = 10_000;

/**
 * The SMTP sender for `config`; one pooled-less transport, a connection per message.
 *
 * nodemailer is imported here, when SMTP is configured, not with this module:
 * its ES modules import `node:http`, whose namespace pulls in Node's fetch
 * (undici) too, about 5 MiB of resident memory that a server paging only by
 * ntfy or webhook never needs (bench/README.md, "Memory").
 */
export function smtpSender(config: SmtpConfig): EmailSender {
  const url = new URL(config.url);
  if (config.password !== undefined) url.password = encodeURIComponent(config.password);
  const transport: Promise<Transporter> = import('nodemailer')
    .then(({ default: nodemailer }): Transporter =>
      nodemailer.createTransport({
        url: url.toString(),
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
      } as Parameters<typeof nodemailer.createTransport>[0]),
    )
    .catch((error: unknown) => {
      // Not the SMTP server's fault, and no retry mends it: said as what it is.
      throw new DeliveryError(
        `the SMTP client (nodemailer) did not load: ${(error as Error).message}; reinstall terdut-server's dependencies`,
        true,
      );
    });
  // Awaited by every send; this only keeps a failed import from being an
  // unhandled rejection before the first one.
  transport.catch(() => {});
  return {
    async send(to, message, deliveryId) {
      const smtp = await transport;
      try {
        const info = (await smtp.sendMail({
          from: config.from,
          to,
          subject: message.title,
          text: emailText(message),
          html: emailHtml(message),
          ...(message.emailThread !== undefined
            ? { inReplyTo: message.emailThread, references: [message.emailThread] }
            : {}),
          headers: {
            'X-Terdut-Delivery': deliveryId,
            // RFC 3834 §5: out-of-office and other auto-responders must not
            // answer it; without it every page to someone away drew a reply.
            'Auto-Submitted': 'auto-generated',
          },
        })) as { messageId?: string; response?: string };
        return {
          messageId: info.messageId ?? null,
          answer: `SMTP accepted${info.response ? ` (${info.response.slice(0, 120)})` : ''}`,
        };
      } catch (error) {
        throw classifySmtpError(error, url.host);
      }
    },
  };
}

/**
 * SMTP's own rule (RFC 5321 §4.2.1): 4yz replies are transient, 5yz
 * permanent (a rejected address will stay rejected). Connection problems are
 * transient; a refused login is permanent until someone fixes the settings.
 */
function classifySmtpError(error: unknown, host: string): DeliveryError {
  const failure = error as { responseCode?: number; code?: string; response?: string; message?: string };
  const said = (failure.response ?? failure.message ?? 'unknown error').slice(0, 300);
  if (typeof failure.responseCode === 'number') {
    return new DeliveryError(`SMTP server ${host} answered ${said}`, failure.responseCode >= 500);
  }
  if (failure.code === 'EAUTH')
    return new DeliveryError(`SMTP server ${host} refused the login: ${said}`, true);
  // nodemailer's code is ESOCKET for a refused connection and an untrusted
  // certificate alike: its message says which.
  const reason = failure.code !== undefined && failure.message ? `${failure.code}: ${said}` : said;
  return new DeliveryError(`SMTP server ${host} not reachable (${reason})`, false);
}

/** What the email calls its link (PageMessage.linkLabel's default). */
const linkLabel = (message: PageMessage): string => message.linkLabel ?? 'Open the incident';

function emailText(message: PageMessage): string {
  const lines = [message.text];
  if (message.incidentUrl !== undefined) lines.push('', `${linkLabel(message)}: ${message.incidentUrl}`);
  if (message.acknowledgePage !== undefined) lines.push(`Acknowledge: ${message.acknowledgePage}`);
  return lines.join('\n') + '\n';
}

function emailHtml(message: PageMessage): string {
  const paragraphs = message.text
    .split('\n')
    .map((line) => `<p>${escapeHtml(line)}</p>`)
    .join('\n');
  const links: string[] = [];
  if (message.incidentUrl !== undefined) {
    links.push(`<a href="${escapeHtml(message.incidentUrl)}">${escapeHtml(linkLabel(message))}</a>`);
  }
  if (message.acknowledgePage !== undefined) {
    links.push(`<a href="${escapeHtml(message.acknowledgePage)}">Acknowledge</a>`);
  }
  return `<!doctype html><html><body><h2>${escapeHtml(message.title)}</h2>\n${paragraphs}\n${
    links.length > 0 ? `<p>${links.join(' · ')}</p>` : ''
  }</body></html>\n`;
}

/** Text → HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
