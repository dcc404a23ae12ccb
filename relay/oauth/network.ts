/**
 * The network an address belongs to, for the per-network rates of the Limits table ("OAuth app
 * registration ... 120 per network"): the /24 of an IPv4 address, the /48 of an IPv6 address.
 * An IPv4-mapped IPv6 address counts as its IPv4 address. Input is the socket's address.
 */
import { isIPv4, isIPv6 } from 'node:net';

export function networkOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped ? mapped[1]! : address;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIPv6(address)) return `${ipv6Groups(address).slice(0, 3).join(':')}::/48`;
  return address;
}

/**
 * The eight groups of an IPv6 address, written out (lowercase, no leading zeros). A trailing
 * dotted IPv4 part stands for the last two groups.
 */
export function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const split = text.split('::');
  const left = split[0] ? split[0].split(':') : [];
  const right = split.length > 1 && split[1] ? split[1].split(':') : [];
  const fill = split.length > 1 ? Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0') : [];
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16).toString(16));
}
