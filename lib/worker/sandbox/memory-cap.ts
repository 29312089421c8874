// The per-instance memory cap (`runtime.max_memory_mb`): every memory a core
// module defines gets a declared maximum no larger than the cap, so the
// engine itself refuses to grow past it (`memory.grow` answers -1 and the
// guest's allocator traps). Checking sizes after a call would let a memory
// bomb take the worker's RAM first.

import { BinaryReader, PREAMBLE, concatBytes, encodeSection, encodeU32, sections, type BinaryFaults } from '../../wit/binary-reader.js';

const PAGE = 65_536;
const MEMORY_SECTION = 5;

export class MemoryCapError extends Error {}

/** `bytes` (a core module) with each defined memory's maximum lowered to `capBytes`. */
export function capMemories(bytes: Uint8Array<ArrayBuffer>, capBytes: number): Uint8Array<ArrayBuffer> {
  const capPages = Math.floor(capBytes / PAGE);
  const parts: Uint8Array[] = [bytes.subarray(0, PREAMBLE)];
  let changed = false;
  for (const { id, body, raw } of sections(bytes, CORE_MODULE_FAULTS)) {
    if (id !== MEMORY_SECTION) parts.push(raw);
    else {
      parts.push(...encodeSection(id, [cappedMemorySection(body, capPages)]));
      changed = true;
    }
  }
  return changed ? concatBytes(parts) : bytes;
}

function cappedMemorySection(section: Uint8Array, capPages: number): Uint8Array {
  const [count, start] = readU32(section, 0);
  const out: number[] = [...encodeU32(count)];
  let at = start;
  for (let i = 0; i < count; i++) {
    const flags = section[at++];
    // Bit 2 is memory64; its limits are u64 and such modules are rare enough to refuse.
    if (flags & 0x04) throw new MemoryCapError('64-bit memories are not supported');
    const [min, minEnd] = readU32(section, at);
    at = minEnd;
    let max = Infinity;
    if (flags & 0x01) [max, at] = readU32(section, at);
    if (min > capPages) {
      throw new MemoryCapError(`the component needs ${mib(min)} MiB of memory to start, more than runtime.max_memory_mb (${mib(capPages)} MiB)`);
    }
    out.push(flags | 0x01, ...encodeU32(min), ...encodeU32(Math.min(max, capPages)));
  }
  return Uint8Array.from(out);
}

function mib(pages: number): number {
  return (pages * PAGE) / 1_048_576;
}

const CORE_MODULE_FAULTS: BinaryFaults = {
  truncated: () => new MemoryCapError('truncated core module'),
  malformed: (offset, what) => new MemoryCapError(`malformed core module at offset ${offset}: ${what}`),
};

/** The u32 LEB128 at `at` and the offset after it. */
function readU32(bytes: Uint8Array, at: number): [value: number, end: number] {
  const r = new BinaryReader(bytes, at, bytes.length, CORE_MODULE_FAULTS);
  const value = r.u32();
  return [value, r.pos];
}
