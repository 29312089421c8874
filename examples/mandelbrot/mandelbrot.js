// The Mandelbrot example: renders the set and encodes it as a PNG, all in
// the component (no host help). The PNG is 8-bit RGB; its image data is a
// zlib stream of stored (uncompressed) deflate blocks, so the encoder stays
// a few lines: PNG needs only the CRC-32 of each chunk and the Adler-32 of
// the data.

const MAX_PIXELS = 1_000_000;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes, start, end) {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function adler32(bytes) {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length; i++) {
    a = (a + bytes[i]) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** A zlib stream of stored deflate blocks (at most 65535 bytes each). */
function zlibStored(data) {
  const blocks = Math.max(1, Math.ceil(data.length / 65535));
  const out = new Uint8Array(2 + data.length + blocks * 5 + 4);
  const view = new DataView(out.buffer);
  out[0] = 0x78;
  out[1] = 0x01;
  let at = 2;
  for (let i = 0; i < blocks; i++) {
    const chunk = data.subarray(i * 65535, Math.min(data.length, (i + 1) * 65535));
    out[at] = i === blocks - 1 ? 1 : 0;
    view.setUint16(at + 1, chunk.length, true);
    view.setUint16(at + 3, ~chunk.length & 0xffff, true);
    out.set(chunk, at + 5);
    at += 5 + chunk.length;
  }
  view.setUint32(at, adler32(data));
  return out;
}

function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out, 4, 8 + data.length));
  return out;
}

function png(width, height, rgbRows) {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per sample, RGB, deflate, no filter method, not interlaced
  const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', zlibStored(rgbRows)), chunk('IEND', new Uint8Array(0))];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A colour for `n` of `max` iterations: black inside the set, a blue-to-gold ramp outside (logarithmic: most points escape early). */
function colour(n, max) {
  if (n >= max) return [0, 0, 0];
  const t = Math.log(n + 1) / Math.log(max + 1);
  return [Math.round(255 * Math.sqrt(t)), Math.round(200 * t), Math.round(120 + 135 * (1 - t))];
}

export const image = {
  render(width, height, iterations) {
    if (width === 0 || height === 0) throw 'width and height must be at least 1';
    if (width * height > MAX_PIXELS) throw `at most ${MAX_PIXELS} pixels, asked for ${width * height}`;
    if (iterations === 0) throw 'iterations must be at least 1';
    // Each row: a filter byte (0: none), then RGB per pixel.
    const rows = new Uint8Array(height * (1 + width * 3));
    const scale = 3 / Math.min(width, height * 1.5);
    for (let y = 0; y < height; y++) {
      const row = y * (1 + width * 3);
      const ci = (y - height / 2) * scale;
      for (let x = 0; x < width; x++) {
        const cr = (x - width * 0.65) * scale;
        let zr = 0;
        let zi = 0;
        let n = 0;
        while (n < iterations && zr * zr + zi * zi <= 4) {
          const t = zr * zr - zi * zi + cr;
          zi = 2 * zr * zi + ci;
          zr = t;
          n++;
        }
        rows.set(colour(n, iterations), row + 1 + x * 3);
      }
    }
    return png(width, height, rows);
  },
};
