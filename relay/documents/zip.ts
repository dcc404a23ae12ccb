/**
 * A zip archive of a few small text files (the plugin bundle, plugins.ts), written with Node's
 * own zlib: raw DEFLATE and CRC-32 come from zlib; this file only lays out the records of the
 * zip format (PKWARE APPNOTE 6.3.10: local file headers, the central directory, its end record).
 * No zip64, no encryption, one disk: the bundle is a few kilobytes.
 *
 * The archive is byte-stable: every entry carries the same fixed time (1980-01-01 00:00, the
 * format's first representable date), so the SHA-256 the marketplace names changes only when
 * a file does.
 */
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntry {
  /** Path inside the archive, `/`-separated, no leading slash. */
  readonly name: string;
  readonly data: Uint8Array;
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL = 0x06054b50;
/** Version 2.0: DEFLATE. */
const VERSION_NEEDED = 20;
/** Made by Unix (3), so the external attributes carry a file mode. */
const VERSION_MADE_BY = (3 << 8) | VERSION_NEEDED;
/** General purpose flag bit 11: names are UTF-8. */
const UTF8_NAMES = 0x0800;
const DEFLATE = 8;
/** MS-DOS date of 1980-01-01 (year 0 from 1980, month 1, day 1); time 00:00:00. */
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const DOS_TIME = 0;
/** A regular file, rw-r--r--, in the high half of the external attributes. */
const FILE_MODE = (0o100644 << 16) >>> 0;

export function zipArchive(entries: readonly ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    if (entry.name === '' || entry.name.startsWith('/') || entry.name.split('/').includes('..')) {
      throw new Error(`zip: not a relative path: ${entry.name}`);
    }
    const name = Buffer.from(entry.name, 'utf8');
    const packed = deflateRawSync(entry.data, { level: 9 });
    const crc = crc32(entry.data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(VERSION_NEEDED, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(DEFLATE, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, name, packed);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_HEADER, 0);
    central.writeUInt16LE(VERSION_MADE_BY, 4);
    central.writeUInt16LE(VERSION_NEEDED, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(DEFLATE, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    // Extra field, comment, disk number and internal attributes stay 0.
    central.writeUInt32LE(FILE_MODE, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);

    offset += local.length + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
