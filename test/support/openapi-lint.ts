// Redocly's `recommended` rules (what `redocly lint --extends=recommended`
// applies), run in the test's process on an OpenAPI document's text: no
// network, no config file.

import { createConfig, lintFromString } from '@redocly/openapi-core';

export interface LintProblem {
  severity: 'error' | 'warn';
  rule: string;
  message: string;
  /** A JSON pointer to where. */
  at: string | undefined;
}

export async function recommendedLint(documentText: string): Promise<LintProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: documentText, absoluteRef: 'openapi.json', config });
  return problems.map((p) => ({ severity: p.severity, rule: p.ruleId, message: p.message, at: p.location[0]?.pointer }));
}

/** The problems of one severity, one a line, for an assertion's message. */
export const listed = (problems: LintProblem[]) => problems.map((p) => `${p.severity} ${p.rule} at ${p.at}: ${p.message}`).join('\n');
