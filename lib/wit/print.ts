// WIT syntax for the runtime's type model: types as they appear in signatures
// (named types by their name), function signatures, and whole documents for a
// component's exports (what `GET /api/services/{d}/{s}` shows).

import { resourceFunctionName, type ComponentInterface, type TypeDefinition, type WitFunction, type WitInterface, type WitType } from './types.js';

export function printType(t: WitType): string {
  // A handle's origin is its resource's (handles.ts resourceKey): `borrow<counter>` is no type named `counter`.
  if (t.origin && t.kind !== 'own' && t.kind !== 'borrow') return t.origin.name;
  return printStructure(t);
}

/** The type spelled out, ignoring the name it may have been exported under. */
export function printStructure(t: WitType): string {
  switch (t.kind) {
    case 'primitive':
      return t.name;
    case 'list':
      return `list<${printType(t.element)}>`;
    case 'fixed-list':
      return `list<${printType(t.element)}, ${t.length}>`;
    case 'tuple':
      return `tuple<${t.elements.map(printType).join(', ')}>`;
    case 'option':
      return `option<${printType(t.inner)}>`;
    case 'result':
      if (t.ok === null && t.err === null) return 'result';
      if (t.err === null) return `result<${printType(t.ok!)}>`;
      return `result<${t.ok === null ? '_' : printType(t.ok)}, ${printType(t.err)}>`;
    case 'own':
      return t.resource;
    case 'borrow':
      return `borrow<${t.resource}>`;
    case 'stream':
    case 'future':
      return t.element === null ? t.kind : `${t.kind}<${printType(t.element)}>`;
    // Nominal types always have an origin in a valid component; these spell out
    // the structure should one ever come without.
    case 'record':
      return `record { ${t.fields.map((f) => `${f.name}: ${printType(f.type)}`).join(', ')} }`;
    case 'variant':
      return `variant { ${t.cases.map((c) => (c.type ? `${c.name}(${printType(c.type)})` : c.name)).join(', ')} }`;
    case 'enum':
      return `enum { ${t.cases.join(', ')} }`;
    case 'flags':
      return `flags { ${t.flags.join(', ')} }`;
  }
}

function printParams(fn: WitFunction, skipSelf = false): string {
  const params = skipSelf ? fn.params.slice(1) : fn.params;
  return params.map((p) => `${p.name}: ${printType(p.type)}`).join(', ');
}

function printResult(fn: WitFunction): string {
  return fn.result === null ? '' : ` -> ${printType(fn.result)}`;
}

/** `func(a: u32, b: u32) -> u32`, as WIT writes the function's type. */
export function printSignature(fn: WitFunction): string {
  return `${fn.async ? 'async ' : ''}func(${printParams(fn)})${printResult(fn)}`;
}

/**
 * A resource's constructor, method or static as its resource's body writes it
 * (docs/api.md §5.1.2): `constructor(start: s64)`, `func(n: s64) -> s64`
 * (without `self`: the handle is it), `static func(a: borrow<counter>) -> counter`;
 * any other function as printSignature does.
 */
export function printMemberSignature(fn: WitFunction): string {
  const m = resourceFunctionName(fn.name);
  const async = fn.async ? 'async ' : '';
  // A fallible constructor says so (`-> result<counter, e>`); an infallible one's own<counter> goes unsaid.
  if (m?.kind === 'constructor') return `constructor(${printParams(fn)})${fn.result?.kind === 'result' ? printResult(fn) : ''}`;
  if (m?.kind === 'method') return `${async}func(${printParams(fn, true)})${printResult(fn)}`;
  if (m?.kind === 'static') return `static ${async}func(${printParams(fn)})${printResult(fn)}`;
  return printSignature(fn);
}

const INDENT = '  ';

/** A type definition as it appears inside an interface body. */
function printDefinition(def: TypeDefinition, functions: WitFunction[], indent: string): string[] {
  const inner = indent + INDENT;
  const t = def.type;
  switch (t.kind) {
    case 'resource':
      return printResource(def.name, functions, indent);
    case 'record':
      return [`${indent}record ${def.name} {`, ...t.fields.map((f) => `${inner}${f.name}: ${printType(f.type)},`), `${indent}}`];
    case 'variant':
      return [`${indent}variant ${def.name} {`, ...t.cases.map((c) => `${inner}${c.name}${c.type ? `(${printType(c.type)})` : ''},`), `${indent}}`];
    case 'enum':
      return [`${indent}enum ${def.name} {`, ...t.cases.map((c) => `${inner}${c},`), `${indent}}`];
    case 'flags':
      return [`${indent}flags ${def.name} {`, ...t.flags.map((f) => `${inner}${f},`), `${indent}}`];
    default:
      return [`${indent}type ${def.name} = ${printStructure(t)};`];
  }
}

/** `resource blob { constructor(..); read: func(..); open: static func(..); }` from the decorated functions. */
function printResource(name: string, functions: WitFunction[], indent: string): string[] {
  const members: string[] = [];
  for (const fn of functions) {
    const m = resourceFunctionName(fn.name);
    if (m?.resource !== name) continue;
    const inner = indent + INDENT;
    members.push(m.kind === 'constructor' ? `${inner}${printMemberSignature(fn)};` : `${inner}${m.member}: ${printMemberSignature(fn)};`);
  }
  return members.length === 0 ? [`${indent}resource ${name};`] : [`${indent}resource ${name} {`, ...members, `${indent}}`];
}

/** How an interface is referred to from `usingPackage`: its bare name within the same package. */
function interfaceRef(name: string, usingPackage: string | undefined): string {
  const m = /^([^:/@]+:[^:/@]+)\/([^@]+)(@.+)?$/.exec(name);
  if (m && `${m[1]}${m[3] ?? ''}` === usingPackage) return m[2];
  return name;
}

function packageOf(i: WitInterface): string | undefined {
  return i.package ? `${i.package.namespace}:${i.package.name}${i.package.version ? `@${i.package.version}` : ''}` : undefined;
}

/** Whether `def` is defined by interface `name` itself, rather than `use`d from another. */
function definedHere(def: TypeDefinition, name: string): boolean {
  return def.type.kind === 'resource' || !def.type.origin || def.type.origin.interface === name;
}

/** An interface's body: `use`s of types defined elsewhere, its own type definitions, then its functions. */
function printInterface(i: WitInterface, indent: string): string[] {
  const inner = indent + INDENT;
  const pkg = packageOf(i);
  const uses = new Map<string, string[]>();
  for (const def of i.types) {
    if (definedHere(def, i.name)) continue;
    const origin = (def.type as WitType).origin!;
    const ref = interfaceRef(origin.interface, pkg);
    const item = origin.name === def.name ? def.name : `${origin.name} as ${def.name}`;
    uses.set(ref, [...(uses.get(ref) ?? []), item]);
  }
  const sections: string[][] = [];
  if (uses.size > 0) sections.push([...uses].map(([ref, names]) => `${inner}use ${ref}.{${names.join(', ')}};`));
  for (const def of i.types) if (definedHere(def, i.name)) sections.push(printDefinition(def, i.functions, inner));
  const plain = i.functions.filter((fn) => !fn.name.startsWith('['));
  if (plain.length > 0) sections.push(plain.map((fn) => `${inner}${fn.name}: ${printSignature(fn)};`));
  return [`${indent}interface ${i.interfaceName} {`, ...sections.flatMap((lines, n) => (n > 0 ? ['', ...lines] : lines)), `${indent}}`];
}

/**
 * A WIT document for everything a component exports (and the world it
 * implements): each exported interface with its type definitions, grouped by
 * package, then the world with its imports and exports.
 */
export function printComponentWit(component: ComponentInterface, worldName: string): string {
  const packages = new Map<string, WitInterface[]>();
  const inline: WitInterface[] = [];
  for (const i of component.interfaces) {
    const pkg = packageOf(i);
    if (pkg) packages.set(pkg, [...(packages.get(pkg) ?? []), i]);
    else inline.push(i);
  }

  const out: string[] = [];
  const blocks = [...packages];
  const single = blocks.length === 1 ? blocks[0] : undefined;
  if (single) {
    out.push(`package ${single[0]};`, '');
    for (const i of single[1]) out.push(...printInterface(i, ''), '');
  } else {
    out.push(`package rt:${worldName};`, '');
    for (const [pkg, interfaces] of blocks) {
      out.push(`package ${pkg} {`);
      interfaces.forEach((i, n) => out.push(...(n > 0 ? [''] : []), ...printInterface(i, INDENT)));
      out.push('}', '');
    }
  }

  const world: string[] = [];
  for (const imp of component.imports) {
    if (imp.kind === 'instance') world.push(`${INDENT}import ${imp.name};`);
    else if (imp.kind === 'function' && imp.function) world.push(`${INDENT}import ${imp.name}: ${printSignature(imp.function)};`);
  }
  for (const def of component.types) world.push(...printDefinition(def, component.functions, INDENT));
  for (const i of component.interfaces) {
    if (packageOf(i)) world.push(`${INDENT}export ${single && packageOf(i) === single[0] ? i.interfaceName : i.name};`);
  }
  for (const i of inline) world.push(...printInterface(i, INDENT).map((l, n) => (n === 0 ? l.replace('interface ', 'export ').replace(' {', ': interface {') : l)));
  for (const fn of component.functions) if (!fn.name.startsWith('[')) world.push(`${INDENT}export ${fn.name}: ${printSignature(fn)};`);
  out.push(`world ${worldName} {`, ...world, '}');
  return `${out.join('\n')}\n`;
}
