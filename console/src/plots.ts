// Plots of the last minutes of requests (README "Console"): requests per
// second, p50/p99 latency and the 5xx share, for all of rt or one service,
// from GET /api/metrics/history (docs/api.md §7), drawn by uPlot. The page
// polls the history as often as rt samples it.

import uPlot from 'uplot';
import type { MetricsHistory } from '../../lib/metrics-history.js';
import { h } from './dom.js';
import { ALL, plotData, servicesIn, type PlotData } from './plot-data.js';

interface Plot {
  name: keyof PlotData;
  title: string;
  unit: string;
  series: { label: string; stroke: string; dash?: number[] }[];
}

const PLOTS: Plot[] = [
  { name: 'rate', title: 'Requests per second', unit: 'req/s', series: [{ label: 'req/s', stroke: '#2456c7' }] },
  {
    name: 'latency',
    title: 'Latency (ms)',
    unit: 'ms',
    series: [
      { label: 'p50 ≈', stroke: '#1e7b34' },
      { label: 'p99 ≈', stroke: '#c77a24', dash: [6, 3] },
    ],
  },
  { name: 'errors', title: 'Errors (5xx share, %)', unit: '%', series: [{ label: '5xx %', stroke: '#b3261e' }] },
];

const HEIGHT = 160;

/** The plots' panel: a selector (all of rt or one service) and the three plots, redrawn with each history polled. */
export class PlotsView {
  readonly element: HTMLElement;
  readonly #select = h('select', { class: 'plots-service', 'aria-label': 'whose requests to plot' });
  readonly #figures = new Map<keyof PlotData, { figure: HTMLElement; body: HTMLElement; chart?: uPlot }>();
  readonly #status = h('span', { class: 'plots-status muted' });
  #history: MetricsHistory | undefined;
  #services: string[] = [];

  constructor() {
    this.#select.append(h('option', { value: ALL }, 'all of rt'));
    this.#select.addEventListener('change', () => this.#draw());
    const figures = PLOTS.map((plot) => {
      const body = h('div', { class: 'plot-body' });
      const figure = h('figure', { class: 'plot', 'data-plot': plot.name, 'data-points': '0', 'data-max': '0' }, h('figcaption', {}, plot.title), body);
      this.#figures.set(plot.name, { figure, body });
      return figure;
    });
    this.element = h(
      'section',
      { class: 'plots' },
      h('div', { class: 'plots-header' }, h('h2', {}, 'Requests, last 10 minutes'), h('label', {}, 'for ', this.#select), this.#status),
      h('div', { class: 'plot-row' }, ...figures),
      h('p', { class: 'plots-note muted' }, 'p50 and p99 ≈ approximate, from histogram buckets (interpolated within the bucket they fall in).'),
    );
    window.addEventListener('resize', () => {
      for (const { body, chart } of this.#figures.values()) chart?.setSize({ width: widthOf(body), height: HEIGHT });
    });
  }

  /** The services the listing names (the selector offers them, and those in the history). */
  setServices(names: string[]): void {
    this.#services = names;
    this.#fillSelect();
  }

  show(history: MetricsHistory): void {
    this.#history = history;
    this.#fillSelect();
    const last = history.samples.at(-1);
    this.#status.textContent = last ? `sampled every ${history.interval_seconds} s, last at ${new Date(last.at).toLocaleTimeString()}` : `no sample yet (every ${history.interval_seconds} s)`;
    this.#draw();
  }

  #fillSelect(): void {
    const names = [...new Set([...this.#services, ...(this.#history ? servicesIn(this.#history) : [])])].sort();
    const have = [...this.#select.options].slice(1).map((o) => o.value);
    if (names.length === have.length && names.every((n, i) => n === have[i])) return;
    const selected = this.#select.value;
    this.#select.replaceChildren(h('option', { value: ALL }, 'all of rt'), ...names.map((n) => h('option', { value: n }, n)));
    this.#select.value = names.includes(selected) ? selected : ALL;
  }

  #draw(): void {
    if (!this.#history) return;
    const service = this.#select.value;
    this.element.dataset.service = service;
    const data = plotData(this.#history, service);
    for (const plot of PLOTS) {
      const entry = this.#figures.get(plot.name)!;
      const { times, lines } = data[plot.name];
      // What is plotted, in figures, for tests and whoever reads the page without seeing it: how many samples have a value, and the largest.
      entry.figure.dataset.points = String(times.filter((_, i) => lines.some((line) => line[i] != null)).length);
      entry.figure.dataset.max = String(Math.max(0, ...lines.flat().filter((v) => v != null)));
      const aligned: uPlot.AlignedData = [times, ...lines];
      if (entry.chart) entry.chart.setData(aligned);
      else entry.chart = new uPlot(options(plot, widthOf(entry.body)), aligned, entry.body);
    }
  }
}

function widthOf(element: HTMLElement): number {
  return Math.max(240, Math.floor(element.clientWidth || element.parentElement?.clientWidth || 320));
}

function options(plot: Plot, width: number): uPlot.Options {
  const value = (_: uPlot, v: number | null) => (v == null ? '–' : `${v.toFixed(v < 10 ? 2 : 1)} ${plot.unit}`);
  return {
    width,
    height: HEIGHT,
    series: [{}, ...plot.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, value, spanGaps: false, ...(s.dash ? { dash: s.dash } : {}) }))],
    scales: { y: { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [{}, { size: 50 }],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
}
