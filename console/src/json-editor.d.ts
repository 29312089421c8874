// The part of @json-editor/json-editor (it ships no types) the console uses, from
// its ES module sources (see form.ts).
declare module '@json-editor/json-editor/src/core.js' {
  export interface ValidationError {
    path: string;
    property: string;
    message: string;
  }

  export interface OptIn {
    label: HTMLElement;
    checkbox: HTMLInputElement;
    container: HTMLElement;
  }

  export class AbstractTheme {
    constructor(editor: JSONEditor, options?: Record<string, unknown>);
    getHiddenLabel(text: string): HTMLElement;
    getHiddenText(text: string): HTMLElement;
    visuallyHidden(element: HTMLElement | undefined): void;
    getOptInCheckbox(formname: string): OptIn;
  }

  export class JSONEditor {
    constructor(element: HTMLElement, options: Record<string, unknown>);
    static defaults: { themes: Record<string, typeof AbstractTheme> };
    on(event: 'change' | 'ready', callback: () => void): void;
    getValue(): unknown;
    setValue(value: unknown): void;
    validate(): ValidationError[];
    destroy(): void;
  }
}
