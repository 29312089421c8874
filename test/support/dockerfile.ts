// Reads a Dockerfile into its stages' instructions, for tests that run a
// stage's steps outside Docker (no engine runs on the test machines). Knows
// the forms our Dockerfile uses: line continuations, comments, `ENV K=V`, and
// the exec (JSON array) form of CMD and HEALTHCHECK CMD.

export interface Instruction {
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
}

export interface Stage {
  from: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    const instruction = { keyword: keyword.toUpperCase(), args: args };
    if (instruction.keyword === 'FROM') stages.push({ from: instruction.args, instructions: [] });
    else if (stages.length === 0) throw new Error(`Dockerfile: ${instruction.keyword} before any FROM`);
    else stages.at(-1)!.instructions.push(instruction);
  }
  return stages;
}

export function argsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** The stage's `ENV K=V` pairs (unquoted values, as ours are). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of argsOf(stage, 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`Dockerfile: ENV ${args}: expected KEY=value pairs`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

/** The command of an exec-form `CMD [...]` (also the tail of `HEALTHCHECK [options] CMD [...]`). */
export function execForm(args: string): string[] {
  const json = /(?:^|\s)(?:CMD\s+)?(\[.*\])$/.exec(args);
  if (!json) throw new Error(`Dockerfile: ${args}: expected the exec form, CMD ["executable", ...]`);
  return JSON.parse(json[1]) as string[];
}

/** The single value of an instruction that must appear once in the stage. */
export function onlyArgs(stage: Stage, keyword: string): string {
  const all = argsOf(stage, keyword);
  if (all.length !== 1) throw new Error(`Dockerfile: expected one ${keyword} in the stage FROM ${stage.from}, found ${all.length}`);
  return all[0];
}
