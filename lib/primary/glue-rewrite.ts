// What rt changes in jco's generated glue before caching it. jco ≥ 1.13 logs
// through a `_debugLog` that reads `globalThis?.process?.env?.JCO_DEBUG` on
// every call, and the glue calls it several times per component call: on Node,
// `process.env` is a getter into the C++ environment, and the read was ~2.5 µs
// of a ~3.2 µs call of a WAT `add` (docs/performance.md, "The glue"). The
// variable is read once, when the glue module is loaded, instead: setting
// JCO_DEBUG for rt's processes still turns jco's debug output on.

/** The expression jco's glue reads the debug switch with. */
const DEBUG_READ = 'globalThis?.process?.env?.JCO_DEBUG';
/** The module-level constant that replaces it. */
const DEBUG_CONSTANT = 'RT_JCO_DEBUG_AT_LOAD';

export interface RewrittenGlue {
  text: string;
  /** How many per-call reads of the environment were replaced (0: the glue has none, as jco 1.12's). */
  debugReads: number;
}

/** `glue` with its per-call environment reads hoisted to one read at load. */
export function rewriteGlue(glue: string): RewrittenGlue {
  const parts = glue.split(DEBUG_READ);
  const debugReads = parts.length - 1;
  if (debugReads === 0) return { text: glue, debugReads };
  const body = parts.join(DEBUG_CONSTANT);
  // After the glue's directive line ("use components"), if it has one, so that it stays first.
  const directive = /^(["'])use [^"'\n]*\1;?\n/.exec(body)?.[0] ?? '';
  const text = `${directive}const ${DEBUG_CONSTANT} = ${DEBUG_READ};\n${body.slice(directive.length)}`;
  return { text, debugReads };
}
