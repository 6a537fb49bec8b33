import { ParsedMail, simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

/**
 * A real SMTP server (the `smtp-server` package) on a free port of 127.0.0.1, keeping what it is
 * sent. `refuse` answers chosen recipients with an SMTP error: 550 (permanent) or 450 (temporary).
 */
export class SmtpSink {
  readonly received: Received[] = [];
  /** Recipient address → SMTP code to refuse it with. */
  readonly refuse = new Map<string, 450 | 550>();
  /** Connections opened, to tell a pool from a connection a message. */
  connections = 0;
  /**
   * Once this many messages are kept, the next ones are neither answered nor kept: their sender
   * waits, as on a server that stopped answering (a delivery held in its middle for as long as a
   * test needs).
   */
  stallAt = Infinity;
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  static async start(): Promise<SmtpSink> {
    const holder: { sink?: SmtpSink } = {};
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      size: 10 * 1024 * 1024,
      onConnect: (_session, callback) => {
        holder.sink!.connections += 1;
        callback();
      },
      onRcptTo: (address, _session, callback) => {
        const code = holder.sink!.refuse.get(address.address);
        if (!code) return callback();
        // As mail servers do, the refusal quotes the address.
        const error = new Error(`${code === 550 ? 'No such mailbox' : 'Try again later'} <${address.address}>`) as Error & {
          responseCode: number;
        };
        error.responseCode = code;
        callback(error);
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then(
            (parsed) => {
              const sink = holder.sink!;
              if (sink.received.length >= sink.stallAt) return;
              sink.received.push({
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
                raw,
                parsed,
              });
              for (const wake of [...sink.waiters]) wake();
              callback();
            },
            (error: Error) => callback(error),
          );
        });
      },
    });
    // A client killed mid-session resets its connection: that is the client's story, not a failure of the sink.
    server.on('error', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.sink = new SmtpSink(server, (server.server.address() as AddressInfo).port);
    return holder.sink;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Waits until `count` messages are kept: true, or false once `ceilingMs` (a ceiling that means hung) passed first. */
  whenReceived(count: number, ceilingMs = 60_000): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (reached: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(reached);
      };
      const wake = () => {
        if (this.received.length >= count) done(true);
      };
      const timer = setTimeout(() => done(false), ceilingMs);
      this.waiters.add(wake);
      wake();
    });
  }

  to(address: string): Received[] {
    return this.received.filter((r) => r.to.includes(address));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
