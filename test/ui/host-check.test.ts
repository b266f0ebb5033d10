/** The Host allowlist's parsing: the names that pass, and look-alikes that do not. */
import { describe, expect, it } from 'vitest';
import { hostAllowlist, hostName } from '../../src/ui/host-check.ts';

describe('the Host header allowlist', () => {
  it('reads the host name without the port, lower-cased, IPv6 in brackets, without a trailing dot', () => {
    expect(hostName('LocalHost:9465')).toBe('localhost');
    expect(hostName('[::1]:9465')).toBe('[::1]');
    expect(hostName('scim.example.com.')).toBe('scim.example.com');
    expect(hostName('')).toBeUndefined();
    expect(hostName(undefined)).toBeUndefined();
    expect(hostName('[::1')).toBeUndefined();
  });

  it('answers loopback names, the bind address and allowedHosts; nothing else', () => {
    const ok = hostAllowlist('10.1.2.3', ['scim.example.com', 'fd00::7']);
    for (const h of [
      'localhost',
      '127.0.0.1:9465',
      '[::1]:9465',
      '10.1.2.3:9465',
      'SCIM.example.com',
      'scim.example.com:443',
      '[fd00::7]:9465',
    ])
      expect(ok(h), h).toBe(true);
    for (const h of [undefined, '', 'evil.example', 'localhost.evil.example', 'scim.example.com.evil.example', '127.0.0.2', '10.1.2.4'])
      expect(ok(h), String(h)).toBe(false);
  });

  it('a wildcard bind address is not a host name', () => {
    expect(hostAllowlist('0.0.0.0', [])('0.0.0.0:9465')).toBe(false);
    expect(hostAllowlist('::', [])('[::]:9465')).toBe(false);
  });
});
