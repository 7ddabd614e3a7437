/** WEBHOOK_ALLOWED_HOSTS at delivery time: which resolved addresses a callback may go to. */
import { describe, expect, it } from 'vitest';
import { addressKind, refusal } from '../../../src/jobs/notify/addressPolicy.js';

describe('addressKind', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['ff02::1', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });
});

describe('refusal', () => {
  it('allows loopback only with `loopback`, public hosts only when named (or `*`), never private or metadata', () => {
    expect(refusal(['loopback'], 'localhost', ['127.0.0.1', '::1'])).toBeNull();
    expect(refusal(['loopback'], 'example.com', ['93.184.216.34'])).toContain('does not list');
    expect(refusal(['*'], 'localhost', ['127.0.0.1'])).toContain('loopback address');
    expect(refusal(['*'], 'example.com', ['93.184.216.34'])).toBeNull();
    expect(refusal(['hooks.example.com'], 'hooks.example.com', ['93.184.216.34'])).toBeNull();
    expect(refusal(['*.example.com'], 'a.b.example.com', ['93.184.216.34'])).toBeNull();
    expect(refusal(['*.example.com'], 'example.org', ['93.184.216.34'])).not.toBeNull();
    // A name resolving to a public and a private address is refused: every address must be allowed.
    expect(refusal(['*', 'loopback'], 'mixed.example.com', ['93.184.216.34', '10.0.0.1'])).toContain('private address');
    expect(refusal(['*', 'loopback'], 'metadata.example.com', ['169.254.169.254'])).toContain('metadata address');
  });
});
