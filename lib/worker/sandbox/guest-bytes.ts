// A stream<u8> as jco's glue hands the host one the guest writes (a 0.3
// stdout's, a file's write-via-stream, an HTTP body): read as the guest
// writes it, `done` once the guest has dropped its end.

export interface GuestBytes {
  read(count: number): Promise<{ done: boolean; value?: Uint8Array | number[] }>;
}
