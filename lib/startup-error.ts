// A problem with what rt was started with (files, directories), not a bug:
// like a bad configuration value (docs/api.md §2), `rt start` prints its one
// line, without a stack, and exits 2.

export class StartupError extends Error {
  override readonly name = 'StartupError';
}
