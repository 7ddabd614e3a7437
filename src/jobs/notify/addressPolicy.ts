/**
 * Which callback receivers may be called (WEBHOOK_ALLOWED_HOSTS), decided at delivery time on the
 * addresses the host resolves to, so that a name cannot point the service at its own network:
 * private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16, fe80::/10,
 * the cloud metadata address 169.254.169.254 among them), unspecified, multicast and reserved
 * addresses are always refused; loopback ones only with the `loopback` entry; public ones for a
 * host the list names (or `*`).
 */
import { isIP } from 'node:net';

export type AddressKind = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

function ipv4Kind(address: string): AddressKind {
  const [a, b, c, d] = address.split('.').map(Number);
  if (a === 169 && b === 254 && c === 169 && d === 254) return 'metadata';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'private';
  if (a === 169 && b === 254) return 'link-local';
  // 0/8 (this network), 192.0.0/24 (protocol assignments), 198.18/15 (benchmarks), multicast and above.
  if (a === 0 || (a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19)) || a >= 224) return 'reserved';
  return 'public';
}

/** The eight 16-bit groups of an IPv6 address. */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0];
  // A trailing dotted IPv4 part (::ffff:10.0.0.1) as two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === null) return front;
  const back = parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function ipv6Kind(address: string): AddressKind {
  const g = ipv6Groups(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses reach an IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return ipv4Kind(v4(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return ipv4Kind(v4(g[6], g[7]));
  if (g.slice(0, 7).every((x) => x === 0)) return g[7] === 1 ? 'loopback' : 'reserved';
  if ((g[0] & 0xfe00) === 0xfc00) return g[0] === 0xfd00 && g[1] === 0x0ec2 ? 'metadata' : 'private';
  if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0] & 0xff00) === 0xff00) return 'reserved';
  return 'public';
}

export function addressKind(address: string): AddressKind {
  return isIP(address) === 6 ? ipv6Kind(address) : ipv4Kind(address);
}

/** Whether the entries name `host` (exactly, by a `*.suffix`, or `*`). */
function named(allowed: readonly string[], host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((entry) => entry === '*' || entry === name || (entry.startsWith('*.') && name.endsWith(entry.slice(1))));
}

/**
 * Why a delivery to `host`, resolved to `addresses`, is refused; null when it may go. Every address
 * must be allowed (the connection goes to the first, but a name must not mix kinds).
 */
export function refusal(allowed: readonly string[], host: string, addresses: readonly string[]): string | null {
  for (const address of addresses) {
    const kind = addressKind(address);
    if (kind === 'public' && named(allowed, host)) continue;
    if (kind === 'loopback' && allowed.includes('loopback')) continue;
    const what = kind === 'public' ? 'a host WEBHOOK_ALLOWED_HOSTS does not list' : `a ${kind} address`;
    return `refused: ${host} resolves to ${address}, ${what} (WEBHOOK_ALLOWED_HOSTS: ${allowed.join(',') || 'empty'})`;
  }
  return null;
}
