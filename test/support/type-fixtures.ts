// componentize-js components that give back values of every kind of WIT
// type, for the WIT ⇄ JSON tests: through jco's glue alone
// (test/unit/codec-jco.test.ts) and through rt over HTTP
// (test/http/wit-json.test.ts). Exported, so that npm test builds them
// ahead (warm-cache.ts).

import type { JsSource } from '../../examples/builder.js';

export const MANY_FLAGS = Array.from({ length: 32 }, (_, i) => `flag${i + 1}`);

/** Every WIT type, echoed: `echo-<type>` gives back its argument. */
const ECHO_WIT = `package test:echo@0.1.0;

interface api {
  record person { name: string, age: u8, first-name: string, tags: list<string> }
  record tricky { %type: u8, class: string, %list: bool, get-HTTP-status: u16, a1-b2: u8 }
  record blob { data: list<u8>, nums: list<u16>, big: list<s64> }
  record profile { nick: option<string>, scores: list<f32>, when: option<u64> }
  enum color { red, green, light-blue }
  flags perms { read, write, exec-all }
  flags tricky-flags { %type, get-HTTP, x1 }
  flags many { ${MANY_FLAGS.join(', ')} }
  variant shape { circle(f64), rect(tuple<f64, f64>), empty, named-point(person) }
  variant maybe { some-val(option<u32>), nothing, nested(option<option<u8>>) }
  type id = u32;
  type outcome = result<string, string>;

  echo-bool: func(x: bool) -> bool;
  echo-u8: func(x: u8) -> u8;
  echo-u16: func(x: u16) -> u16;
  echo-u32: func(x: u32) -> u32;
  echo-u64: func(x: u64) -> u64;
  echo-s8: func(x: s8) -> s8;
  echo-s16: func(x: s16) -> s16;
  echo-s32: func(x: s32) -> s32;
  echo-s64: func(x: s64) -> s64;
  echo-f32: func(x: f32) -> f32;
  echo-f64: func(x: f64) -> f64;
  echo-char: func(x: char) -> char;
  echo-string: func(x: string) -> string;
  echo-bytes: func(b: list<u8>) -> list<u8>;
  echo-list-s8: func(x: list<s8>) -> list<s8>;
  echo-list-u16: func(x: list<u16>) -> list<u16>;
  echo-list-s16: func(x: list<s16>) -> list<s16>;
  echo-list-u32: func(x: list<u32>) -> list<u32>;
  echo-list-s32: func(x: list<s32>) -> list<s32>;
  echo-list-u64: func(x: list<u64>) -> list<u64>;
  echo-list-s64: func(x: list<s64>) -> list<s64>;
  echo-list-f32: func(x: list<f32>) -> list<f32>;
  echo-list-f64: func(x: list<f64>) -> list<f64>;
  echo-list-bool: func(x: list<bool>) -> list<bool>;
  echo-list-char: func(x: list<char>) -> list<char>;
  echo-list-string: func(x: list<string>) -> list<string>;
  echo-list-list: func(x: list<list<u8>>) -> list<list<u8>>;
  echo-ids: func(x: list<id>) -> list<id>;
  echo-tuple: func(x: tuple<u32, string, bool>) -> tuple<u32, string, bool>;
  echo-record: func(p: person) -> person;
  echo-tricky: func(t: tricky) -> tricky;
  echo-blob: func(b: blob) -> blob;
  echo-profile: func(p: profile) -> profile;
  echo-enum: func(c: color) -> color;
  echo-flags: func(f: perms) -> perms;
  echo-tricky-flags: func(f: tricky-flags) -> tricky-flags;
  echo-many: func(f: many) -> many;
  echo-variant: func(s: shape) -> shape;
  echo-maybe: func(m: maybe) -> maybe;
  echo-opt: func(x: option<u32>) -> option<u32>;
  echo-opt-opt: func(x: option<option<u32>>) -> option<option<u32>>;
  echo-opt3: func(x: option<option<option<string>>>) -> option<option<option<string>>>;
  echo-opt-bytes: func(x: option<list<u8>>) -> option<list<u8>>;
  echo-result: func(r: result<string, u32>) -> result<string, u32>;
  echo-nested-result: func(r: list<result<string, u32>>) -> list<result<string, u32>>;
  echo-result-unit: func(r: option<result<_, string>>) -> option<result<_, string>>;
  echo-result-bare: func(r: list<result>) -> list<result>;
  echo-result-opt: func(r: option<result<option<u64>, list<u8>>>) -> option<result<option<u64>, list<u8>>>;
  fail-if: func(s: string) -> result<string, string>;
  aliased: func(s: string) -> outcome;
  unit-err: func(fail: bool) -> result<u32>;
  check: func(ok: bool) -> result<_, string>;
  validate: func(p: person) -> result<person, list<string>>;
  mix: func(a: u8, b: string, c: list<u16>) -> tuple<u8, string, list<u16>>;
  nothing: func();
}

world echo {
  export api;
  export add: func(a: u32, b: u32) -> u32;
}
`;

const ECHO_JS = `const id = (x) => x;
export const api = {
  echoBool: id, echoU8: id, echoU16: id, echoU32: id, echoU64: id,
  echoS8: id, echoS16: id, echoS32: id, echoS64: id, echoF32: id, echoF64: id,
  echoChar: id, echoString: id, echoBytes: id,
  echoListS8: id, echoListU16: id, echoListS16: id, echoListU32: id, echoListS32: id,
  echoListU64: id, echoListS64: id, echoListF32: id, echoListF64: id,
  echoListBool: id, echoListChar: id, echoListString: id, echoListList: id, echoIds: id,
  echoTuple: id, echoRecord: id, echoTricky: id, echoBlob: id, echoProfile: id,
  echoEnum: id, echoFlags: id, echoTrickyFlags: id, echoMany: id,
  echoVariant: id, echoMaybe: id,
  echoOpt: id, echoOptOpt: id, echoOpt3: id, echoOptBytes: id,
  echoResult(r) { if (r.tag === 'ok') return r.val; throw r.val; },
  echoNestedResult: id, echoResultUnit: id, echoResultBare: id, echoResultOpt: id,
  failIf(s) { if (s.startsWith('fail')) throw 'failed: ' + s; return s; },
  aliased(s) { if (s.startsWith('fail')) throw 'failed: ' + s; return s; },
  unitErr(fail) { if (fail) throw undefined; return 7; },
  check(ok) { if (!ok) throw 'not ok'; },
  validate(p) { if (p.age > 150) throw ['age: too old', 'name: ' + p.name]; return p; },
  mix(a, b, c) { return [a, b, c]; },
  nothing() {},
};
export function add(a, b) { return (a + b) >>> 0; }
`;

export const ECHO_EVERY_TYPE: JsSource = { kind: 'js', wit: ECHO_WIT, world: 'echo', js: ECHO_JS };

/** Compound types in JavaScript (componentize-js). */
export const COMPOUND_TYPES: JsSource = {
  kind: 'js',
  world: 'roundtrip',
  wit: `package test:roundtrip@1.0.0;
interface api {
  record person { name: string, age: u8, nick-name: option<string> }
  variant shape { circle(f64), square(tuple<u32, u32>), none }
  enum color { red, light-blue }
  flags perms { read, write, exec-all }
  echo-bool: func(b: bool) -> bool;
  echo-char: func(c: char) -> char;
  echo-string: func(s: string) -> string;
  echo-person: func(p: person) -> person;
  echo-shape: func(s: shape) -> shape;
  echo-color: func(c: color) -> color;
  echo-perms: func(p: perms) -> perms;
  echo-strings: func(l: list<string>) -> list<string>;
  echo-tuple: func(t: tuple<u8, string, bool>) -> tuple<u8, string, bool>;
  echo-option: func(o: option<u32>) -> option<u32>;
  echo-option2: func(o: option<option<u32>>) -> option<option<u32>>;
  echo-option3: func(o: option<option<option<string>>>) -> option<option<option<string>>>;
  /// Results inside other types: a top-level result is answered as ok (200) or err (500) instead.
  echo-results: func(r: list<result<string, u32>>) -> list<result<string, u32>>;
  echo-result-empty: func(r: option<result<_, string>>) -> option<result<_, string>>;
  echo-bytes: func(b: list<u8>) -> list<u8>;
  echo-deep: func(d: list<option<person>>) -> list<option<person>>;
  checked: func(fail: bool) -> result<string, string>;
}
world roundtrip { export api; }`,
  js: `const id = (x) => x;
export const api = {
  echoBool: id, echoChar: id, echoString: id, echoPerson: id, echoShape: id, echoColor: id,
  echoPerms: id, echoStrings: id, echoTuple: id, echoOption: id, echoOption2: id, echoOption3: id,
  echoResults: id, echoResultEmpty: id, echoBytes: id, echoDeep: id,
  checked(fail) {
    if (fail) throw 'it failed';
    return 'fine';
  },
};`,
};
