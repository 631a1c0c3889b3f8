/**
 * A real SMTP server in-process (`smtp-server`, from the nodemailer
 * project) that keeps every message it accepts, parsed by `mailparser`.
 * It can be told to refuse recipients (550) to exercise permanent failures.
 */
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface SmtpSink {
  url: string;
  readonly messages: ParsedMail[];
  /** Recipients refused with 550 from now on. */
  refuse(address: string): void;
  close(): Promise<void>;
}

export async function startSmtpSink(options: { user: string; password: string }): Promise<SmtpSink> {
  const messages: ParsedMail[] = [];
  const refused = new Set<string>();
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (refused.has(address.address)) {
        const error = new Error('mailbox unavailable') as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
      } else callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push(parsed);
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${options.user}:${options.password}@127.0.0.1:${port}`,
    messages,
    refuse(address) {
      refused.add(address);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
