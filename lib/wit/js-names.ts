// The JS names jco 1.12 gives WIT identifiers in its glue: functions, record
// fields and flags in lower camel case, resource classes in upper camel case.
// WIT words are all-lowercase or all-uppercase, so each word is lowercased
// and all but the first capitalised (`get-HTTP-url` → `getHttpUrl`).

export function jsIdentifier(witName: string): string {
  const words = witName.split('-');
  let out = words[0].toLowerCase();
  for (let i = 1; i < words.length; i++) {
    const w = words[i].toLowerCase();
    out += w.charAt(0).toUpperCase() + w.slice(1);
  }
  return out;
}

export function jsClassName(witName: string): string {
  const camel = jsIdentifier(witName);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}
