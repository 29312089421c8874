// Header rules every wasi:http version shares: what a field name and value
// may hold, and which names are the connection's (the host frames the
// message, so a guest can never set them).

/** A header as rt passes them around: lowercase name, raw value bytes. */
export type FieldEntry = [name: string, value: Uint8Array];

/** wasmtime's DEFAULT_FORBIDDEN_HEADERS: connection-level headers a component cannot send. */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'http2-settings']);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** An HTTP token (RFC 9110 §5.6.2): what a field name and a method are. */
export function isHttpToken(text: string): boolean {
  return TOKEN.test(text);
}

export const isValidFieldName = isHttpToken;

/** `headers` without the connection's (and any name that is no token), as wasmtime passes a message between a guest and the wire both ways: framing them is the transport's business. */
export function endToEnd(headers: readonly FieldEntry[]): FieldEntry[] {
  return headers.filter(([name]) => isValidFieldName(name) && !FORBIDDEN_HEADERS.has(name));
}

/** RFC 9110 field-value bytes as the http crate accepts them: no CTLs but HTAB, no DEL. */
export function isValidFieldValue(value: Uint8Array): boolean {
  for (const b of value) if ((b < 0x20 && b !== 0x09) || b === 0x7f) return false;
  return true;
}
