// A method's form, generated from its request schema by @json-editor/json-editor,
// and the editor of a call's body made of it (the form, and its JSON).
// Bundled from its ES module sources rather than its prebuilt dist: half the
// size (no polyfills for old browsers) and no `new Function`, which the page's
// CSP would refuse.

/*! @json-editor/json-editor 2.17.2 | MIT License | https://github.com/json-editor/json-editor */
import { JSONEditor, type OptIn } from '@json-editor/json-editor/src/core.js';
import { h } from './dom.js';
import { formSchema, parameterCount, type Schema } from './form-schema.js';

const THEME = 'rt';

/**
 * json-editor's plain HTML theme, with its visually hidden labels and opt-in
 * checkboxes styled by a class instead of a style attribute: the console's
 * Content-Security-Policy allows stylesheets from rt only, so style
 * attributes are refused. (Its own
 * stylesheet, which it would inject as a <style> element, is bundled into
 * console.css instead: `disable_theme_rules` below.)
 */
function registerTheme(): void {
  if (JSONEditor.defaults.themes[THEME]) return;
  const Html = JSONEditor.defaults.themes.html;
  class CspTheme extends Html {
    override getHiddenLabel(text: string): HTMLElement {
      return hidden(document.createElement('label'), text);
    }

    override getHiddenText(text: string): HTMLElement {
      return hidden(document.createElement('span'), text);
    }

    override visuallyHidden(element: HTMLElement | undefined): void {
      element?.classList.add('visually-hidden');
    }

    // The same elements as the base theme's, with a class for its margin.
    override getOptInCheckbox(formname: string): OptIn {
      const checkbox = document.createElement('input');
      checkbox.type = 'checkbox';
      checkbox.id = `${formname}-opt-in`;
      checkbox.classList.add('json-editor-opt-in', 'je-opt-in');
      const label = hidden(document.createElement('label'), `${formname}-opt-in`);
      label.htmlFor = checkbox.id;
      const container = document.createElement('span');
      container.append(checkbox, label);
      return { label, checkbox, container };
    }
  }
  JSONEditor.defaults.themes[THEME] = CspTheme;
}

function hidden<E extends HTMLElement>(element: E, text: string): E {
  element.textContent = text;
  element.classList.add('visually-hidden');
  return element;
}

export interface MethodForm {
  /** The body as the form has it now. */
  value(): unknown;
  /** Puts a body typed as JSON into the form (when the form can show it). */
  show(value: unknown): void;
  onChange(callback: () => void): void;
}

export function methodForm(host: HTMLElement, requestSchema: Schema): MethodForm {
  registerTheme();
  const editor = new JSONEditor(host, {
    schema: formSchema(requestSchema),
    theme: THEME,
    iconlib: null,
    disable_theme_rules: true,
    disable_edit_json: true,
    disable_properties: true,
    disable_collapse: true,
    disable_array_delete_all_rows: true,
    disable_array_delete_last_row: true,
    prompt_before_delete: false,
    required_by_default: true,
    no_additional_properties: true,
    show_errors: 'interaction',
  });
  return {
    value: () => editor.getValue(),
    show: (value) => editor.setValue(value),
    onChange: (callback) => editor.on('change', callback),
  };
}

export interface RequestEditor {
  /** The form and the JSON body under it; or, for a call without parameters, a line saying so. */
  element: HTMLElement;
  /** The body to send: the form's value, or the JSON typed under it since the form last changed; undefined without parameters. */
  body(): string | undefined;
}

/** A call's body, edited through the form made from its request schema (invoke, a constructor, a handle's method). */
export function requestEditor(requestSchema: Schema | undefined): RequestEditor {
  if (!requestSchema || parameterCount(requestSchema) === 0) return { element: h('p', { class: 'muted' }, 'No parameters.'), body: () => undefined };
  const formHost = h('div', { class: 'form' });
  const bodyText = h('textarea', { class: 'request-body', rows: '4', spellcheck: 'false', 'aria-label': 'request body (JSON)' });
  const form = methodForm(formHost, requestSchema);
  let typed = false;
  form.onChange(() => {
    if (document.activeElement === bodyText) return;
    typed = false;
    bodyText.value = JSON.stringify(form.value(), null, 2);
  });
  bodyText.addEventListener('input', () => {
    typed = true;
    try {
      form.show(JSON.parse(bodyText.value));
    } catch {
      // not JSON (yet): sent as typed, and rt answers 400 naming the problem
    }
  });
  return {
    element: h('div', { class: 'request' }, formHost, h('details', { class: 'raw-body' }, h('summary', {}, 'JSON body'), bodyText)),
    body: () => (typed ? bodyText.value : JSON.stringify(form.value())),
  };
}
