// Which repositories may grant host access (docs/api.md §8). Grants are the
// operator's, never the artifact's: a `file:` repository is the operator's
// own files, while an `https:` one is someone else's, and its sidecars may
// grant host paths, variables or outbound hosts only when the operator lists
// it in `repositories.trusted`.

/** Whether the sidecars of `repository` may grant `allowed_paths`, `env` and `allowed_outbound_hosts`. */
export function mayGrant(repository: string, trusted: readonly string[]): boolean {
  if (!repository.startsWith('https:')) return true;
  const key = repositoryKey(repository);
  return trusted.some((url) => repositoryKey(url) === key);
}

/** `https://Host/repo/` and `https://host/repo` name one repository (rt reads both as the folder `repo/`). */
function repositoryKey(url: string): string {
  const href = new URL(url).href;
  return href.endsWith('/') ? href.slice(0, -1) : href;
}
