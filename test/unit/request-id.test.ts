// Request ids (lib/worker/http/request-id.ts, docs/api.md §5.7): a client's sane id
// is kept, anything else is replaced by one of rt's own.

import { expect } from 'chai';
import { requestId } from '../../lib/worker/http/request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids', () => {
  it('keeps a sane id: UUIDs, hex, base64, prefixed ids, up to 200 characters', () => {
    for (const id of ['f47ac10b-58cc-4372-a567-0e02b2c3d479', '4bf92f3577b34da6a3ce929d0e0e4736', 'aGVsbG8+d29ybGQ/Lw==', 'svc:web.1_42', 'x', 'a'.repeat(200)]) {
      expect(requestId(id)).to.equal(id);
    }
  });

  it('replaces a missing, long or unsafe id with a fresh UUID', () => {
    const ids = ['', 'a'.repeat(201), 'two words', 'a, b', 'line\nbreak', 'quote"', '<script>', 'é'].map(requestId);
    for (const id of ids) expect(id).to.match(UUID);
    expect(new Set(ids).size).to.equal(ids.length);
  });
});
