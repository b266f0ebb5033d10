/**
 * HEC response codes (the `code` field of HEC's JSON answer), kept as data: what each one
 * means for a batch. Source: Splunk's "Troubleshoot HTTP Event Collector" status code table.
 */

export type HecVerdict =
  /** Accepted. */
  | 'ok'
  /** Credential problem: stop (fatal auth). */
  | 'auth'
  /** Sink/token misconfiguration that retrying cannot fix: stop (fatal config). */
  | 'config'
  /** Splunk is busy or failing: retry with backoff. */
  | 'retry'
  /** The event named by `invalid-event-number` is bad (reject it, resend the others); without the number, the whole request. */
  | 'reject-event'
  /** Every event of the request is refused for the same reason (e.g. the sink's index). */
  | 'reject-all';

export interface HecCode {
  verdict: HecVerdict;
  /** Stable rejection / error code. */
  name: string;
  text: string;
}

export const HEC_CODES: Readonly<Record<number, HecCode>> = {
  0: { verdict: 'ok', name: 'hec_success', text: 'Success' },
  1: { verdict: 'auth', name: 'hec_token_disabled', text: 'Token disabled' },
  2: { verdict: 'auth', name: 'hec_token_required', text: 'Token is required' },
  3: { verdict: 'auth', name: 'hec_invalid_authorization', text: 'Invalid authorization' },
  4: { verdict: 'auth', name: 'hec_invalid_token', text: 'Invalid token' },
  5: { verdict: 'reject-all', name: 'hec_no_data', text: 'No data' },
  6: { verdict: 'reject-event', name: 'hec_invalid_data_format', text: 'Invalid data format' },
  7: { verdict: 'reject-all', name: 'hec_incorrect_index', text: 'Incorrect index' },
  8: { verdict: 'retry', name: 'hec_internal_error', text: 'Internal server error' },
  9: { verdict: 'retry', name: 'hec_server_busy', text: 'Server is busy' },
  10: { verdict: 'config', name: 'hec_channel_missing', text: 'Data channel is missing' },
  11: { verdict: 'config', name: 'hec_channel_invalid', text: 'Invalid data channel' },
  12: { verdict: 'reject-event', name: 'hec_event_field_required', text: 'Event field is required' },
  13: { verdict: 'reject-event', name: 'hec_event_field_blank', text: 'Event field cannot be blank' },
  14: { verdict: 'config', name: 'hec_ack_disabled', text: 'ACK is disabled' },
  15: { verdict: 'reject-event', name: 'hec_indexed_fields_error', text: 'Error in handling indexed fields' },
  16: { verdict: 'config', name: 'hec_query_auth_disabled', text: 'Query string authorization is not enabled' },
  17: { verdict: 'ok', name: 'hec_healthy', text: 'HEC is healthy' },
  18: { verdict: 'retry', name: 'hec_unhealthy_queues_full', text: 'HEC is unhealthy, queues are full' },
  19: { verdict: 'retry', name: 'hec_unhealthy_ack_unavailable', text: 'HEC is unhealthy, ack service unavailable' },
  20: { verdict: 'retry', name: 'hec_unhealthy_queue_integrity', text: 'HEC is unhealthy, queue integrity problem' },
};

/** What to tell the operator for a configuration verdict. */
export const HEC_CONFIG_HINTS: Readonly<Record<number, string>> = {
  10: 'Splunk requires a data channel for this token: set `channel` (a GUID) or enable indexerAcknowledgement',
  11: 'the configured `channel` is not a valid HEC data channel GUID',
  14: 'indexerAcknowledgement.enabled is true but indexer acknowledgement is disabled on the HEC token: enable it in Splunk or turn it off here',
  16: 'query-string authorization is disabled on this HEC token; the sink sends the token in the Authorization header',
};

export interface HecResponseBody {
  text?: string;
  code?: number;
  ackId?: number;
  invalidEventNumber?: number;
}

/** HEC's JSON answer, tolerant of proxies that answer with HTML or nothing. */
export function parseHecBody(text: string): HecResponseBody {
  try {
    const raw = JSON.parse(text) as Record<string, unknown>;
    const out: HecResponseBody = {};
    if (typeof raw['text'] === 'string') out.text = raw['text'];
    if (typeof raw['code'] === 'number') out.code = raw['code'];
    if (typeof raw['ackId'] === 'number') out.ackId = raw['ackId'];
    if (typeof raw['invalid-event-number'] === 'number') out.invalidEventNumber = raw['invalid-event-number'];
    return out;
  } catch {
    return {};
  }
}
