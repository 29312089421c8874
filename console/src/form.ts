// A method's form, generated from its request schema by @json-editor/json-editor.
// Bundled from its ES module sources rather than its prebuilt dist: half the
// size (no polyfills for old browsers) and no `new Function`, which the page's
// CSP would refuse.

/*! @json-editor/json-editor 2.17.2 | MIT License | https://github.com/json-editor/json-editor */
import { JSONEditor, type OptIn } from '@json-editor/json-editor/src/core.js';
import { formSchema, type Schema } from './form-schema.js';

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
