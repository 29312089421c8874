// The schema a method's form is generated from. rt describes a request body
// in JSON Schema 2020-12 (lib/wit/json-schema.ts); the form library reads the
// older drafts and offers a switcher for every oneOf/anyOf. So: the body as
// an object keyed by parameter name (the first of the two shapes rt accepts),
// tuples as `items` arrays, `const` as a one-value enum, and a switcher only
// where the value really has cases (option, result, variant), each titled by
// its case. Where rt accepts one value in several encodings (a u64 as a
// number or a decimal string, a float or "NaN", bytes as base64 or numbers),
// the form offers the first; the JSON body under the form takes any.

export type Schema = { [key: string]: unknown };

/** The form's schema for an invoke request body, from the method's `request_schema`. */
export function formSchema(requestSchema: Schema): Schema {
  const shapes = requestSchema.oneOf as Schema[] | undefined;
  return { title: 'arguments', ...adapt(shapes?.[0] ?? requestSchema) };
}

/** How many parameters the method takes. */
export function parameterCount(requestSchema: Schema): number {
  const byName = (requestSchema.oneOf as Schema[] | undefined)?.[0] ?? requestSchema;
  return Object.keys((byName.properties as Schema | undefined) ?? {}).length;
}

function adapt(schema: Schema): Schema {
  const { oneOf, anyOf, prefixItems, items, properties, ...rest } = schema;
  const cases = (anyOf ?? oneOf) as Schema[] | undefined;
  if (cases && !isCases(cases)) return adapt({ ...rest, ...cases[0] });
  const out: Schema = { ...rest };
  if (cases) {
    const option = cases.some((c) => c.type === 'null');
    out[anyOf ? 'anyOf' : 'oneOf'] = cases.map((c) => ({ ...adapt(c), title: option && c.type !== 'null' ? 'some' : caseTitle(c) }));
  }
  if (properties) out.properties = Object.fromEntries(Object.entries(properties as Record<string, Schema>).map(([k, v]) => [k, adapt(v)]));
  if (Array.isArray(prefixItems)) {
    out.items = (prefixItems as Schema[]).map(adapt);
    if (items === false) out.additionalItems = false;
  } else if (items !== undefined) {
    out.items = typeof items === 'object' && items !== null ? adapt(items as Schema) : items;
  }
  if ('const' in out) {
    out.enum = [out.const];
    out.default = out.const;
    delete out.const;
  }
  if (out.type === 'boolean') out.format = 'checkbox';
  // flags: a set of names, each a checkbox
  if (out.type === 'array' && out.uniqueItems && (out.items as Schema | undefined)?.enum) out.format = 'checkbox';
  return out;
}

/** An option (null or a value), a result or a variant (objects told apart by a key or a tag); not alternative encodings. */
function isCases(cases: Schema[]): boolean {
  return cases.some((c) => c.type === 'null') || cases.every((c) => c.type === 'object');
}

function caseTitle(c: Schema): string {
  if (c.type === 'null') return 'none';
  const props = c.properties as Record<string, Schema> | undefined;
  const tag = props?.tag?.const;
  if (typeof tag === 'string') return tag;
  const required = c.required as string[] | undefined;
  // result's {"ok": v} / {"err": v}, option<option<T>>'s {"some": v}
  if (required?.length === 1 && props && Object.keys(props).length === 1 && !c.title) return required[0];
  return typeof c.title === 'string' ? c.title : typeof c.type === 'string' ? c.type : 'value';
}
