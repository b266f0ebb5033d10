/** The Redis/queue error reporter: one line per distinct error per window, with what it suppressed. */
import { describe, expect, it } from 'vitest';
import { errorReporter } from '../../src/jobs/error-log.ts';
import { captureLogger } from '../observability/support.ts';

describe('redis/queue error reporter', () => {
  it('logs a distinct error once per window, then says how often and by whom it was repeated', () => {
    const { logger, records } = captureLogger('info');
    let now = 0;
    const report = errorReporter(logger, 30_000, () => now);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    for (const c of ['redis:state', 'queue:reconcile', 'worker:reconcile-apply', 'redis:state']) report(c)(refused);
    report('flow')(new Error('Connection is closed.'));
    now = 31_000;
    report('queue-events:reconcile-apply')(refused);
    expect(records().map((r) => [r['msg'], r['component'], r['err'], r['code'], r['repeated'], r['alsoFrom']])).toEqual([
      ['redis/queue error', 'redis:state', 'connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED', undefined, undefined],
      ['redis/queue error', 'flow', 'Connection is closed.', undefined, undefined, undefined],
      [
        'redis/queue error',
        'queue-events:reconcile-apply',
        'connect ECONNREFUSED 127.0.0.1:6379',
        'ECONNREFUSED',
        3,
        ['queue:reconcile', 'redis:state', 'worker:reconcile-apply'],
      ],
    ]);
    // No stack in the line: the message and code say what the on-call engineer needs.
    for (const r of records()) expect(JSON.stringify(r)).not.toMatch(/\bat .*:\d+:\d+/);
  });
});
