/**
 * `scim-audit-sync simulate-entra`: the Entra ID simulator (identity platform token
 * endpoint + Microsoft Graph) as a long-running process, for demos, trying a config, and
 * benchmarks. It registers one app with a client secret and a certificate, writes them and
 * the server's certificate (to trust as `caFile`) into --out-dir (mode 600), and prints one
 * JSON line once listening: {"event":"listening","url","tenantId","clientId",
 * "clientSecretFile","certificateFile","caFile"}. SIGTERM/SIGINT stop it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { EntraFaultRule } from '../simulator/entra/types.ts';
import { runCommand } from './exit-codes.ts';
import { commandLogger } from './options.ts';

interface SimulateEntraOptions {
  host: string;
  port: number;
  users: number;
  groups: number;
  domain: string;
  outDir: string;
  tlsCert?: string;
  tlsKey?: string;
  consent: boolean;
  throttleEvery: number;
}

const CLIENT_ID = '0f1e2d3c-4b5a-4697-8877-665544332211';

function integer(min: number): (raw: string) => number {
  return (raw) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}`);
    return n;
  };
}

export function simulateEntraCommand(): Command {
  return new Command('simulate-entra')
    .description('run the Entra ID simulator (token endpoint + Microsoft Graph users/groups/members/delta) over HTTPS until SIGTERM/SIGINT')
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port (0 = any free port)').argParser(integer(0)).default(0))
    .addOption(new Option('--users <n>', 'generated users').argParser(integer(0)).default(100))
    .addOption(new Option('--groups <n>', 'generated groups (with nesting and a cycle from 5 groups up)').argParser(integer(0)).default(10))
    .addOption(new Option('--domain <domain>', 'primary domain').default('contoso.example'))
    .addOption(new Option('--out-dir <dir>', 'where the client secret, app certificate and server CA are written').default('entra-sim'))
    .addOption(new Option('--tls-cert <file>', 'server certificate (PEM); default: a generated self-signed one (needs the openssl CLI)'))
    .addOption(new Option('--tls-key <file>', 'server key (PEM) for --tls-cert'))
    .addOption(new Option('--no-consent', 'do not grant admin consent (tokens carry no roles; Graph answers 403)'))
    .addOption(
      new Option('--throttle-every <n>', 'answer every Nth Graph request 429 TooManyRequests with Retry-After: 1 (0 = never)')
        .argParser(integer(0))
        .default(0),
    )
    .action(
      runCommand(async (o: SimulateEntraOptions, cmd: Command) => {
        const log = commandLogger(cmd);
        const sim = await import('../simulator/entra/index.ts');
        if ((o.tlsCert === undefined) !== (o.tlsKey === undefined))
          throw new InvalidArgumentError('set both --tls-cert and --tls-key, or neither');
        const tls =
          o.tlsCert !== undefined && o.tlsKey !== undefined
            ? { cert: readFileSync(o.tlsCert, 'utf8'), key: readFileSync(o.tlsKey, 'utf8') }
            : sim.selfSignedServerCertificate();
        const dir = resolve(o.outDir);
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const secret = sim.generateClientSecret();
        const cert = sim.generateCertificate();
        const files = {
          clientSecretFile: join(dir, 'client-secret'),
          certificateFile: join(dir, 'app-cert.pem'),
          caFile: join(dir, 'ca.pem'),
        };
        writeFileSync(files.clientSecretFile, `${secret}\n`, { mode: 0o600 });
        writeFileSync(files.certificateFile, cert.pem, { mode: 0o600 });
        writeFileSync(files.caFile, tls.cert);
        const faults: EntraFaultRule[] =
          o.throttleEvery > 0 ? [{ kind: 'throttle-429', every: o.throttleEvery, retryAfterSeconds: 1 }] : [];
        const server = await sim.startEntraSimulator({
          host: o.host,
          port: o.port,
          domain: o.domain,
          tls,
          apps: [
            {
              clientId: CLIENT_ID,
              secrets: [{ value: secret }],
              certificates: [cert.certPem],
              permissions: ['User.Read.All', 'GroupMember.Read.All', 'CustomSecAttributeAssignment.Read.All'],
              adminConsent: o.consent,
            },
          ],
          faults,
          recordRequests: false,
          onRequest: (e) => log.debug({ method: e.method, path: e.path, status: e.status, fault: e.fault }, 'request'),
        });
        sim.seedDirectory(server.directory, { users: o.users, groups: o.groups });
        process.stdout.write(
          `${JSON.stringify({ event: 'listening', url: server.url, tenantId: server.tenantId, clientId: CLIENT_ID, ...files })}\n`,
        );
        log.info(server.directory.counts(), 'Entra simulator listening');
        const stop = (signal: NodeJS.Signals): void => {
          log.info({ signal }, 'Entra simulator stopping');
          process.off('SIGTERM', stop);
          process.off('SIGINT', stop);
          server.close().catch((e: unknown) => log.error({ err: e }, 'simulator close failed'));
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      }),
    );
}
