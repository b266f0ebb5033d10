/**
 * The same-run baseline for latency-bound throughput: plain undici POSTs of minimal SCIM
 * users at a fixed concurrency, no engine at all. What this reaches against a simulator
 * with injected latency is the ceiling the environment allows (timers, sockets, CPU),
 * so the engine can be judged against it as well as against the ideal.
 */
import { Agent, request } from 'undici';
import { SCHEMA_USER } from '../../src/platform/scim/types.ts';

export async function rawPosts(
  url: string,
  token: string,
  total: number,
  concurrency: number,
): Promise<{ seconds: number; opsPerS: number }> {
  const agent = new Agent({ connections: concurrency * 2 });
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          const i = next++;
          const res = await request(`${url}/api/scim/v2/Users`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
            body: JSON.stringify({ schemas: [SCHEMA_USER], externalId: `raw-${i}`, userName: `raw.${i}@bench.example.com`, active: true }),
          });
          await res.body.text();
          if (res.statusCode !== 201) throw new Error(`raw POST answered ${res.statusCode}`);
        }
      }),
    );
  } finally {
    await agent.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { seconds, opsPerS: total / seconds };
}
