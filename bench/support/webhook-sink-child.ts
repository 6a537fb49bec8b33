/**
 * The webhook sink's process, forked by `webhook-sink.ts`: receives the certificate over IPC,
 * starts the sink, sends back its port, then answers the bench's questions (a path's tally, the
 * connections, its CPU) until it is killed. Not a bench of its own.
 */
import type { LocalCaCertificate } from './local-ca-certificate';
import type { SinkRequest } from './webhook-sink';
import { WebhookSink } from './webhook-sink';

process.once('message', (certificate: LocalCaCertificate) => {
  void WebhookSink.start(certificate).then((sink) => {
    process.on('message', (request: SinkRequest) => {
      const answer = (value: unknown) => process.send!({ id: request.id, value });
      if (request.ask === 'tally') {
        const { ids, ...rest } = sink.tally(request.path);
        answer({ ...rest, distinct: ids.size });
      } else if (request.ask === 'connections') answer({ ...sink.connections });
      else {
        const cpu = process.cpuUsage();
        answer(cpu.user + cpu.system);
      }
    });
    process.send!({ port: sink.port });
  });
});
